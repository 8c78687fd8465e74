package status

import (
	"bytes"
	"context"
	"fmt"
	"mime"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// AnswerAdapter implements PodStatusClient with the requests ClientsetAdapter sends, byte for
// byte (client-go's typed Get and Patch build them the same way over the same REST client), and
// decodes a protobuf answer for what the status manager reads of it: the pod's metadata without
// its managed fields, and its status. Its spec and managed fields are left out (empty).
//
// syncPod reads of the GET's pod its UID, name and namespace, its status (merged and diffed into
// the patch), and what canBeDeleted needs (deletion timestamp, the mirror annotation, the
// phase); of the PATCH's answer the same and, for the startup tracker, the containers' states.
// The spec (containers, volumes, tolerations) and the managed fields (one entry for each
// manager, with its field set) are most of a Deployment's pod, and client-go decoded both into a
// new object for each of the two answers of every status write: about 100 KB of garbage a pod
// while a fleet's pods start, by BenchmarkNodeHeap's allocation profile.
//
// An answer that is not a protobuf v1 Pod (JSON, a Status, an unknown envelope, bytes that do not
// walk) is decoded by client-go whole, as ClientsetAdapter decodes it, and errors are client-go's.
// The skipped fields are walked, not parsed: a pod whose spec or managed fields hold bytes
// client-go's decode would refuse (no API server sends them) is returned where client-go fails
// (docs/fidelity.md, "run").
type AnswerAdapter struct {
	// Client is the clientset; it must not be nil.
	Client kubernetes.Interface
}

var _ PodStatusClient = AnswerAdapter{}

// GetPod reads a pod: its metadata without managed fields, and its status.
func (a AnswerAdapter) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	rc, ok := a.restClient()
	if !ok {
		return ClientsetAdapter(a).GetPod(ctx, namespace, name)
	}
	opts := metav1.GetOptions{}
	res := rc.Get().
		UseProtobufAsDefault().
		NamespaceIfScoped(namespace, namespace != "").
		Resource("pods").
		Name(name).
		VersionedParams(&opts, scheme.ParameterCodec).
		Do(ctx)
	pod, err := podAnswer(res)
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// PatchPodStatus sends a strategic merge patch to the status subresource and returns the pod as
// stored afterwards: its metadata without managed fields, and its status.
func (a AnswerAdapter) PatchPodStatus(ctx context.Context, namespace, name string, patch []byte) (*v1.Pod, error) {
	rc, ok := a.restClient()
	if !ok {
		return ClientsetAdapter(a).PatchPodStatus(ctx, namespace, name, patch)
	}
	opts := metav1.PatchOptions{}
	res := rc.Patch(types.StrategicMergePatchType).
		UseProtobufAsDefault().
		NamespaceIfScoped(namespace, namespace != "").
		Resource("pods").
		Name(name).
		SubResource("status").
		VersionedParams(&opts, scheme.ParameterCodec).
		Body(patch).
		Do(ctx)
	pod, err := podAnswer(res)
	if err != nil {
		return nil, fmt.Errorf("patch status of pod %s/%s: %w", namespace, name, err)
	}
	return pod, nil
}

// DeletePod deletes a pod as ClientsetAdapter does: its answer is a Status, decoded by client-go.
func (a AnswerAdapter) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	return ClientsetAdapter(a).DeletePod(ctx, namespace, name, uid)
}

// restClient is the clientset's core REST client; false for a clientset without one (client-go's
// fake clientset, whose typed calls its object tracker answers: ClientsetAdapter's then).
func (a AnswerAdapter) restClient() (rest.Interface, bool) {
	rc := a.Client.CoreV1().RESTClient()
	if c, ok := rc.(*rest.RESTClient); rc == nil || ok && c == nil {
		return nil, false
	}
	return rc, true
}

// podAnswer is the pod of a request's result: Result.Into's, or, for a protobuf v1 Pod, the
// pod's metadata without managed fields and its status (leanPod).
func podAnswer(res rest.Result) (*v1.Pod, error) {
	if err := res.Error(); err != nil {
		return nil, err
	}
	var contentType string
	body, _ := res.ContentType(&contentType).Raw()
	if media, _, err := mime.ParseMediaType(contentType); err == nil && media == runtime.ContentTypeProtobuf {
		if pod, ok := leanPod(body); ok {
			return pod, nil
		}
	}
	pod := &v1.Pod{}
	if err := res.Into(pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// protobufPrefix starts every Kubernetes protobuf message on the wire, before its
// runtime.Unknown envelope.
var protobufPrefix = []byte{'k', '8', 's', 0}

// The field numbers leanPod walks (k8s.io/api and apimachinery's generated.proto).
const (
	unknownTypeMeta        = 1 // runtime.Unknown's typeMeta
	unknownRaw             = 2 // its raw bytes
	unknownContentEncoding = 3
	unknownContentType     = 4
	typeMetaAPIVersion     = 1
	typeMetaKind           = 2
	podMetadata            = 1  // v1.Pod's metadata
	podSpec                = 2  // (its status, 3, is decoded with the rest)
	metaManagedFields      = 17 // ObjectMeta's managedFields
)

// leanPod decodes a protobuf answer as client-go's protobuf serializer decodes it into a v1.Pod,
// less the spec and the metadata's managed fields, which it skips unread; false when the answer
// is not a v1 Pod's envelope or any of the bytes it reads do not parse, so that client-go decodes
// it and gives its own result or error. The skipped fields' bytes are only walked (their lengths),
// so a malformed spec or managed fields entry is not refused as client-go would.
//
// The generated Unmarshal of a message applies its fields one after another into the message
// without resetting it, so unmarshaling each kept field's bytes alone, in order, gives the same
// message as the whole bytes less the skipped fields (TestLeanPodAsClientGo, FuzzLeanPod).
func leanPod(body []byte) (*v1.Pod, bool) {
	if !bytes.HasPrefix(body, protobufPrefix) {
		return nil, false
	}
	var apiVersion, kind, raw, encoding []byte
	var hasRaw bool
	env := fields{b: body[len(protobufPrefix):]}
	for env.next() {
		// runtime.Unknown's four fields are strings or bytes; its Unmarshal fails on any other
		// wire type, and so does this.
		if env.num <= unknownContentType && env.wire != wireBytes {
			return nil, false
		}
		switch env.num {
		case unknownTypeMeta:
			t := fields{b: env.value}
			for t.next() {
				if t.num <= typeMetaKind && t.wire != wireBytes {
					return nil, false
				}
				switch t.num {
				case typeMetaAPIVersion:
					apiVersion = t.value
				case typeMetaKind:
					kind = t.value
				}
			}
			if t.err {
				return nil, false
			}
		case unknownRaw:
			raw, hasRaw = env.value, true
		case unknownContentEncoding:
			encoding = env.value
		}
	}
	if env.err {
		return nil, false
	}
	if !hasRaw || string(apiVersion) != "v1" || string(kind) != "Pod" || len(encoding) != 0 {
		return nil, false
	}
	pod := &v1.Pod{}
	f := fields{b: raw}
	for f.next() {
		switch {
		case f.num == podSpec && f.wire == wireBytes:
			continue
		case f.num == podMetadata && f.wire == wireBytes:
			m := fields{b: f.value}
			for m.next() {
				if m.num == metaManagedFields && m.wire == wireBytes {
					continue
				}
				if pod.ObjectMeta.Unmarshal(m.field) != nil {
					return nil, false
				}
			}
			if m.err {
				return nil, false
			}
			continue
		}
		if pod.Unmarshal(f.field) != nil {
			return nil, false
		}
	}
	if f.err {
		return nil, false
	}
	return pod, true
}

// The protobuf wire types fields knows.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// fields walks the fields of the protobuf message b in order: after each next that returns
// true, num is the field's number, wire its wire type, field its whole bytes (key and value)
// and, for a length-delimited field, value its value. next returns false at the end and on bytes
// that do not parse, which set err. Groups, which no Kubernetes message has, do not parse. (A
// loop, not a callback: a closure that captured the pod cost an allocation for each field.)
type fields struct {
	b            []byte
	i            int
	num, wire    int
	field, value []byte
	err          bool
}

func (f *fields) next() bool {
	if f.err || f.i >= len(f.b) {
		return false
	}
	b, i := f.b, f.i
	key, n := uvarint(b[i:])
	if n <= 0 {
		f.err = true
		return false
	}
	i += n
	num, wire := key>>3, int(key&7)
	if num == 0 || num > 1<<29-1 {
		f.err = true
		return false
	}
	f.value = nil
	switch wire {
	case wireVarint:
		_, n := uvarint(b[i:])
		if n <= 0 {
			f.err = true
			return false
		}
		i += n
	case wireFixed64:
		if len(b)-i < 8 {
			f.err = true
			return false
		}
		i += 8
	case wireFixed32:
		if len(b)-i < 4 {
			f.err = true
			return false
		}
		i += 4
	case wireBytes:
		l, n := uvarint(b[i:])
		if n <= 0 || l > uint64(len(b)-i-n) {
			f.err = true
			return false
		}
		i += n
		f.value = b[i : i+int(l)]
		i += int(l)
	default:
		f.err = true
		return false
	}
	f.num, f.wire, f.field = int(num), wire, b[f.i:i]
	f.i = i
	return true
}

// uvarint decodes a protobuf varint of at most 10 bytes: the value and its length, 0 or less
// when b ends first or the varint is too long.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, -1
}
