package fakeapiserver

import (
	"bytes"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestProtoMessageInEnvelope: an entry's message is found inside its envelope, not encoded a
// second time, and is the object's own encoding, for the kinds a list is made of.
func TestProtoMessageInEnvelope(t *testing.T) {
	for _, obj := range []interface {
		runtime.Object
		Marshal() ([]byte, error)
	}{
		&corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Labels: map[string]string{"a": "b"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		&corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n"}},
		&coordinationv1.Lease{TypeMeta: metav1.TypeMeta{Kind: "Lease", APIVersion: "coordination.k8s.io/v1"}},
	} {
		e := &entry{obj: obj}
		enc, err := e.protoEncoding()
		if err != nil {
			t.Fatal(err)
		}
		if enc.message == 0 {
			t.Errorf("%T: the message was not found in the envelope %q", obj, enc.envelope)
			continue
		}
		msg, err := e.protoMessage()
		if err != nil {
			t.Fatal(err)
		}
		want, err := obj.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(msg, want) {
			t.Errorf("%T: message in the envelope %q, want %q", obj, msg, want)
		}
	}
	// An encoding that does not end as the envelope does is not searched.
	if off := messageOffset([]byte("k8s\x00\x0a\x00"), &corev1.Pod{}); off != 0 {
		t.Errorf("messageOffset of a short encoding = %d, want 0", off)
	}
}
