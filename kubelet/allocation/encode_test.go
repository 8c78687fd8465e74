package allocation

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
)

// encodeCheckpoint returns the checkpoint of the allocations. The same allocations give the
// same bytes (JSON sorts map keys). It is appendCheckpoint into buffers of its own, for a
// test or benchmark that keeps the bytes.
func encodeCheckpoint(allocated map[types.UID]map[string]v1.ResourceRequirements) ([]byte, error) {
	var b checkpointBuffers
	if err := b.appendCheckpoint(allocationsOf(allocated)); err != nil {
		return nil, err
	}
	return b.file.Bytes(), nil
}

// marshalCheckpoint is the checkpoint built the kubelet's way, the reference appendCheckpoint
// is held to: the data marshalled from a map, copied into a string, the checksum taken through
// the dump for hashing, and the file marshalled.
func marshalCheckpoint(t testing.TB, allocated map[types.UID]map[string]v1.ResourceRequirements) []byte {
	t.Helper()
	info := checkpointInfo{Entries: make(map[types.UID]podResourceInfo, len(allocated))}
	for uid, containers := range allocated {
		info.Entries[uid] = podResourceInfo{ContainerResources: containers}
	}
	data, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(string(data)))
	b, err := json.Marshal(checkpointFile{Data: string(data), Checksum: uint64(h.Sum32())})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendCheckpointIsMarshals: the file is byte for byte the one built the kubelet's way,
// for UIDs and container names that JSON escapes, in and out of order, and with no pods; and
// buffers used before (as the pool hands them out) give the same bytes.
func TestAppendCheckpointIsMarshals(t *testing.T) {
	q := resource.MustParse
	full := v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("1Gi"), "example.com/gpu": q("2")},
		Requests: v1.ResourceList{v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("64Mi")},
		Claims:   []v1.ResourceClaim{{Name: "gpu", Request: "one"}, {Name: "<&>"}},
	}
	tests := map[string]map[types.UID]map[string]v1.ResourceRequirements{
		"none":          {},
		"the kubelet's": kubeletAllocations(),
		"escaped": {
			`uid "quoted" \ back`:   {"a<b>&c": full},
			"uid\n\t\x01\u2028\xff": {"é\u2029": {}, "": full},
			"z":                     {},
			"A":                     {"x": {Requests: v1.ResourceList{v1.ResourceCPU: q("0.5")}}},
		},
	}
	reused := &checkpointBuffers{}
	for name, allocated := range tests {
		t.Run(name, func(t *testing.T) {
			want := string(marshalCheckpoint(t, allocated))
			got, err := encodeCheckpoint(allocated)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("encodeCheckpoint (-Marshal's +got):\n%s", diff)
			}
			reused.reset()
			if err := reused.appendCheckpoint(allocationsOf(allocated)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, reused.file.String()); diff != "" {
				t.Errorf("appendCheckpoint into used buffers (-Marshal's +got):\n%s", diff)
			}
		})
	}
}

// TestBuffersKeepNoUIDs: the buffers' room past the UIDs of the last save holds no UID, after a
// reset (as the pool gets them back) and after a save of fewer pods into used buffers, so that a
// pooled buffer keeps no pod's UID string alive.
func TestBuffersKeepNoUIDs(t *testing.T) {
	many := map[types.UID]podAllocation{"a": {}, "b": {}, "c": {}, "d": {}}
	few := map[types.UID]podAllocation{"e": {}}
	kept := func(b *checkpointBuffers) []types.UID {
		var out []types.UID
		for _, uid := range b.keys[len(b.keys):cap(b.keys)] {
			if uid != "" {
				out = append(out, uid)
			}
		}
		return out
	}
	var b checkpointBuffers
	if err := b.appendCheckpoint(many); err != nil {
		t.Fatal(err)
	}
	b.reset()
	if got := kept(&b); len(got) != 0 {
		t.Errorf("after reset, the buffers keep UIDs %v, want none", got)
	}
	if err := b.appendCheckpoint(many); err != nil {
		t.Fatal(err)
	}
	b.file.Reset()
	if err := b.appendCheckpoint(few); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.UID{"e"}, b.keys); diff != "" {
		t.Errorf("keys after a save of fewer pods (-want +got):\n%s", diff)
	}
	if got := kept(&b); len(got) != 0 {
		t.Errorf("after a save of fewer pods, the buffers keep UIDs %v past them, want none", got)
	}
}

// TestChecksumIsTheDumps: the checksum hashes what the kubelet's dump for hashing prints for
// the string, whatever it holds.
func TestChecksumIsTheDumps(t *testing.T) {
	for _, data := range []string{"", "{}", `{"entries":{}}`, "\"quoted\" \\ \n\xff\u2028", kubeletCheckpoint} {
		h := fnv.New32a()
		fmt.Fprintf(h, "%v", dump.ForHash(data))
		want := uint64(h.Sum32())
		if got := checksum(data); got != want {
			t.Errorf("checksum(%q) = %d, the dump's is %d", data, got, want)
		}
		if got := checksum([]byte(data)); got != want {
			t.Errorf("checksum([]byte(%q)) = %d, the dump's is %d", data, got, want)
		}
	}
}

// TestChecksumCopiesNothing: the checksum of a string hashes it where it lies, as the checksum
// of bytes does; a string copied into bytes to hash them would be a copy of the checkpoint's
// data at each read.
func TestChecksumCopiesNothing(t *testing.T) {
	data := strings.Repeat(kubeletCheckpoint, 10)
	bytes := []byte(data)
	var sum uint64
	if n := testing.AllocsPerRun(10, func() { sum = checksum(data) }); n != 0 {
		t.Errorf("checksum(string) allocates %v times, want none", n)
	}
	if n := testing.AllocsPerRun(10, func() { sum = checksum(bytes) }); n != 0 {
		t.Errorf("checksum([]byte) allocates %v times, want none", n)
	}
	_ = sum
}

// TestAppendJSONStringIsMarshals holds appendJSONString to json.Marshal of a string, on every
// byte alone and on strings with what Marshal escapes.
func TestAppendJSONStringIsMarshals(t *testing.T) {
	inputs := []string{"", "plain", `"\`, "<a href='x'>&amp;</a>", "\b\f\n\r\t\x00\x1f\x7f",
		"\u2028\u2029", "é ünï ☃ 𝄞", "\xff\xfe", "a\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"}
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	for _, s := range inputs {
		checkJSONString(t, s)
	}
}

func checkJSONString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString(nil, s); string(got) != string(want) {
		t.Errorf("appendJSONString(%q) = %s, Marshal's is %s", s, got, want)
	}
	if got := appendJSONString([]byte("kept"), []byte(s)); string(got) != "kept"+string(want) {
		t.Errorf("appendJSONString(kept, []byte(%q)) = %s, want kept%s", s, got, want)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\xff\u2028<>&\n"} {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

// scribbleCheckpoint is a memCheckpoint whose Write, once it has copied the bytes, overwrites
// the slice it was lent, as a caller's later use of the buffer would: a Flush that kept the lent
// bytes to tell an unchanged checkpoint from a changed one would then compare against garbage.
type scribbleCheckpoint struct{ memCheckpoint }

func (c *scribbleCheckpoint) Write(b []byte) error {
	err := c.memCheckpoint.Write(b)
	for i := range b {
		b[i] = 'X'
	}
	return err
}

// TestFlushAfterRestartKnowsTheFile: a Manager started over a checkpoint does not write it again
// for the allocations it holds, and writes it for a change; Flush does not keep the bytes it
// lent to Write (the checkpoint scribbles over them), so the same allocations write nothing and
// a change writes the file the kubelet would.
func TestFlushAfterRestartKnowsTheFile(t *testing.T) {
	cp := &scribbleCheckpoint{}
	e := newEnv(t, "4")
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	web := pod("web", "100m")
	e.pods.AddPod(web)
	e.m.SetAllocatedResources(web)
	if err := e.m.Flush(); err != nil || cp.writes != 1 {
		t.Fatalf("Flush() = %v, %d writes, want 1", err, cp.writes)
	}
	e.m.SetAllocatedResources(web)
	if err := e.m.Flush(); err != nil || cp.writes != 1 {
		t.Errorf("Flush() of the same allocations = %v, %d writes, want still 1", err, cp.writes)
	}
	if diff := cmp.Diff(string(marshalCheckpoint(t, mapsOf(e.m.allocated))), string(cp.data)); diff != "" {
		t.Errorf("written checkpoint (-want +got):\n%s", diff)
	}
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	e.m.SetAllocatedResources(web)
	if err := e.m.Flush(); err != nil || cp.writes != 1 {
		t.Errorf("Flush() of the restored allocations = %v, %d writes, want still 1", err, cp.writes)
	}
	e.m.SetAllocatedResources(e.resize(web, "200m"))
	if err := e.m.Flush(); err != nil || cp.writes != 2 {
		t.Errorf("Flush() after a change = %v, %d writes, want 2", err, cp.writes)
	}
	e.m.SetAllocatedResources(e.resize(web, "200m"))
	if err := e.m.Flush(); err != nil || cp.writes != 2 {
		t.Errorf("Flush() of the changed allocations again = %v, %d writes, want still 2", err, cp.writes)
	}
	if diff := cmp.Diff(string(marshalCheckpoint(t, mapsOf(e.m.allocated))), string(cp.data)); diff != "" {
		t.Errorf("written checkpoint (-want +got):\n%s", diff)
	}
}
