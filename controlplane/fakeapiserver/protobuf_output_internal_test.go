package fakeapiserver

import (
	"bytes"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestEncodeProtobufBytes: encodeProtobuf, which keeps the serializer's own buffer, gives the
// bytes the serializer writes into a bytes.Buffer, for the kinds the store keeps, a list, a
// Status and an object already in an envelope (runtime.Unknown).
func TestEncodeProtobufBytes(t *testing.T) {
	tm := func(kind, apiVersion string) metav1.TypeMeta {
		return metav1.TypeMeta{Kind: kind, APIVersion: apiVersion}
	}
	pod := &corev1.Pod{TypeMeta: tm("Pod", "v1"),
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "12", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("100m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}}
	for _, obj := range []runtime.Object{
		pod,
		&corev1.Node{TypeMeta: tm("Node", "v1"), ObjectMeta: metav1.ObjectMeta{Name: "node-1"}},
		&coordinationv1.Lease{TypeMeta: tm("Lease", "coordination.k8s.io/v1"), ObjectMeta: metav1.ObjectMeta{Name: "node-1", Namespace: "kube-node-lease"}},
		&corev1.Event{TypeMeta: tm("Event", "v1"), ObjectMeta: metav1.ObjectMeta{Name: "web.1", Namespace: "default"}, Reason: "Started"},
		&corev1.PodList{TypeMeta: tm("PodList", "v1"), Items: []corev1.Pod{*pod, *pod}},
		&metav1.Status{TypeMeta: tm("Status", "v1"), Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired},
		&corev1.Pod{TypeMeta: tm("Pod", "v1")},
		&runtime.Unknown{TypeMeta: runtime.TypeMeta{Kind: "Pod", APIVersion: "v1"}, Raw: []byte{0x0a, 0x00}, ContentType: runtime.ContentTypeProtobuf},
	} {
		var want bytes.Buffer
		if err := protoDecoder.Encode(obj, &want); err != nil {
			t.Fatal(err)
		}
		got, err := encodeProtobuf(obj)
		if err != nil {
			t.Fatalf("%T: %v", obj, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%T: encodeProtobuf() = %x, want %x", obj, got, want.Bytes())
		}
	}
	if n, copied := testing.AllocsPerRun(20, func() { _, _ = encodeProtobuf(pod) }), testing.AllocsPerRun(20, func() {
		var buf bytes.Buffer
		_ = protoDecoder.Encode(pod, &buf)
	}); n >= copied {
		t.Errorf("encodeProtobuf() allocates %v times, a copy into a bytes.Buffer %v: want one fewer", n, copied)
	}
}

// TestProtoOutputWrites: what protoOutput returns is the bytes written, in order, whether or
// not they are its allocator's buffer, and a later write never lands in a kept buffer.
func TestProtoOutputWrites(t *testing.T) {
	var o protoOutput
	buf := o.Allocate(8)
	copy(buf, "envelope")
	if _, err := o.Write(buf[:5]); err != nil {
		t.Fatal(err)
	}
	if &o.data[0] != &buf[0] {
		t.Errorf("the allocator's buffer, written once, was copied")
	}
	if _, err := o.Write([]byte("-tail")); err != nil {
		t.Fatal(err)
	}
	if got := string(o.data); got != "envel-tail" {
		t.Errorf("after a second write: %q, want %q", got, "envel-tail")
	}
	if got := string(buf); got != "envelope" {
		t.Errorf("the second write changed the first buffer: %q", got)
	}

	var other protoOutput
	mine := []byte("not allocated")
	if _, err := other.Write(mine); err != nil {
		t.Fatal(err)
	}
	mine[0] = 'N'
	if got := string(other.data); got != "not allocated" {
		t.Errorf("bytes not from the allocator were kept, not copied: %q", got)
	}
}
