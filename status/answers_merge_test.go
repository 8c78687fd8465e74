package status

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLeanPodMergeSemantics: repeated fields decode as the generated code decodes them: a
// message's repeated occurrences merge (the pod's metadata twice, its status twice, the envelope's
// type split over two), the envelope's raw bytes are the last occurrence's, an unknown envelope
// field is skipped.
func TestLeanPodMergeSemantics(t *testing.T) {
	marshal := func(pod *v1.Pod) []byte {
		t.Helper()
		b, err := pod.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	metaOnly := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"x": "y"}, Generation: 7, ResourceVersion: "9"}}
	statusOnly := &v1.Pod{Status: v1.PodStatus{Reason: "R", ContainerStatuses: []v1.ContainerStatus{{Name: "second"}}}}
	raw := append(append(marshal(answerPod()), marshal(metaOnly)...), marshal(statusOnly)...)
	// Written by hand: the generated Marshal writes empty strings, which a later occurrence would
	// overwrite rather than leave alone.
	var env []byte
	env = appendBytesField(env, unknownRaw, []byte{0x0a, 0x00})
	env = appendBytesField(env, 1, []byte{0x0a, 0x02, 'v', '1'})
	env = appendBytesField(env, 9, []byte("junk"))
	env = appendBytesField(env, unknownRaw, raw)
	env = appendBytesField(env, 1, []byte{0x12, 0x03, 'P', 'o', 'd'})
	body := append([]byte("k8s\x00"), env...)
	got, ok := leanPod(body)
	if !ok {
		t.Fatal("leanPod refused the answer")
	}
	want := decodeLikeClientGo(t, body)
	if want == nil {
		t.Fatal("client-go refused the answer")
	}
	if want = withoutSkipped(want); !reflect.DeepEqual(got, want) {
		t.Errorf("pod differs (-client-go +leanPod):\n%s", cmp.Diff(want, got))
	}
	if got.Labels["x"] != "y" || got.Labels["app"] != "web" || len(got.Status.ContainerStatuses) != 2 {
		t.Errorf("the occurrences did not merge: labels %v, %d container statuses", got.Labels, len(got.Status.ContainerStatuses))
	}
}

// stripSkipped is body without the pod's spec and managed fields (nil when its fields do not
// walk): what client-go must decode for leanPod's answer to be right.
func stripSkipped(body []byte) []byte {
	env := fields{b: body[4:]}
	var out []byte
	for env.next() {
		if env.num != unknownRaw {
			out = append(out, env.field...)
			continue
		}
		var raw []byte
		f := fields{b: env.value}
		for f.next() {
			switch {
			case f.num == podSpec && f.wire == wireBytes:
			case f.num == podMetadata && f.wire == wireBytes:
				var meta []byte
				m := fields{b: f.value}
				for m.next() {
					if m.num != metaManagedFields || m.wire != wireBytes {
						meta = append(meta, m.field...)
					}
				}
				if m.err {
					return nil
				}
				raw = appendBytesField(raw, podMetadata, meta)
			default:
				raw = append(raw, f.field...)
			}
		}
		if f.err {
			return nil
		}
		out = appendBytesField(out, unknownRaw, raw)
	}
	if env.err {
		return nil
	}
	return append([]byte("k8s\x00"), out...)
}

// appendBytesField appends field num of the length-delimited wire type holding v.
func appendBytesField(b []byte, num int, v []byte) []byte {
	b = append(b, byte(num<<3|2))
	l := len(v)
	for l >= 0x80 {
		b = append(b, byte(l)|0x80)
		l >>= 7
	}
	return append(append(b, byte(l)), v...)
}
