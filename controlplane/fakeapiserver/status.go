package fakeapiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// writeError answers with err as a metav1.Status in JSON. Errors that are not API errors become
// 500.
func writeError(w http.ResponseWriter, err error) {
	writeErrorAs(w, outputJSON, err)
}

// writeErrorAs answers with err as a metav1.Status in the form out (JSON or protobuf), as
// kube-apiserver encodes an error in the media type the request negotiated.
func writeErrorAs(w http.ResponseWriter, out output, err error) {
	if qc := (*queueCancelledError)(nil); errors.As(err, &qc) {
		writeTooManyRequests(w)
		return
	}
	st := failureStatus(err)
	if out == outputProtobuf {
		writeObject(w, out, int(st.Code), &st)
		return
	}
	writeJSON(w, int(st.Code), &st)
}

// failureStatus is the Status the server answers a failed request with.
func failureStatus(err error) metav1.Status {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = internalError(err)
	}
	st := status.Status()
	st.Kind = "Status"
	st.APIVersion = "v1"
	st.Status = metav1.StatusFailure
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	return st
}

// writeJSON answers with obj encoded as JSON.
func writeJSON(w http.ResponseWriter, code int, obj any) {
	raw, err := json.Marshal(obj)
	if err != nil {
		code = http.StatusInternalServerError
		raw = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"encoding failed","reason":"InternalError","code":500}`)
	}
	writeRaw(w, code, raw)
}

func writeRaw(w http.ResponseWriter, code int, raw []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}

// writeProto answers with raw, an object in the protobuf envelope.
func writeProto(w http.ResponseWriter, code int, raw []byte) {
	w.Header().Set("Content-Type", protobufMediaType)
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}

// writeEntry answers with a stored object in the form out: its JSON as stored, or its protobuf
// encoding (made once per entry, see entry.protobuf).
func writeEntry(w http.ResponseWriter, out output, code int, e *entry) error {
	if out != outputProtobuf {
		writeRaw(w, code, e.encoded())
		return nil
	}
	raw, err := e.protobuf()
	if err != nil {
		return err
	}
	writeProto(w, code, raw)
	return nil
}

// writeObject answers with obj, whose kind and apiVersion are set, in the form out.
func writeObject(w http.ResponseWriter, out output, code int, obj runtime.Object) {
	if out != outputProtobuf {
		writeJSON(w, code, obj)
		return
	}
	raw, err := encodeProtobuf(obj)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, failureStatus(internalError(err)))
		return
	}
	writeProto(w, code, raw)
}

// encodeProtobuf encodes obj, whose kind and apiVersion are set, in the protobuf envelope.
func encodeProtobuf(obj runtime.Object) ([]byte, error) {
	var out protoOutput
	if err := protoDecoder.EncodeWithAllocator(obj, &out, &out); err != nil {
		return nil, fmt.Errorf("encode %s as protobuf: %w", obj.GetObjectKind().GroupVersionKind().Kind, err)
	}
	return out.data, nil
}

// protoOutput is the protobuf serializer's allocator and writer at once. The serializer sizes
// an API object (to within the few bytes it reserves for the envelope's length), encodes it into one buffer it asks its allocator for, and writes that
// buffer out in one Write: protoOutput keeps that buffer itself as the encoding, where a
// bytes.Buffer would take a copy of it and leave the serializer's for the collector (a pod's
// encoding, once for every version a protobuf reader reads). Anything else written (a second
// write, bytes not from its allocator) is copied, so the result is the bytes written, in order,
// whatever the serializer does.
type protoOutput struct {
	alloc []byte // the last buffer Allocate gave, which nothing else holds
	data  []byte
	wrote bool
}

func (o *protoOutput) Allocate(n uint64) []byte {
	o.alloc = make([]byte, n)
	return o.alloc
}

func (o *protoOutput) Write(p []byte) (int, error) {
	if !o.wrote && len(p) > 0 && len(o.alloc) > 0 && &p[0] == &o.alloc[0] {
		o.data, o.alloc = p, nil
	} else {
		o.data = append(o.data[:len(o.data):len(o.data)], p...)
	}
	o.wrote = true
	return len(p), nil
}

func internalError(v any) *apierrors.StatusError {
	return apierrors.NewInternalError(fmt.Errorf("%v", v))
}

// statusError builds an error that carries an exact code and reason, for the ones apierrors has
// no constructor for.
func statusError(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg,
	}}
}

// notAcceptable refuses an Accept header, naming what the answer could have been: protobuf too
// when the resource has it.
func notAcceptable(accept string, proto bool) error {
	types := "application/json, application/yaml"
	if proto {
		types += ", " + protobufMediaType
	}
	return statusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("only the following media types are accepted: %s; got %q", types, accept))
}

// The media types kube-apiserver lists in a 415: its serializers' for an object's body (CBOR's
// feature gate is off in v1.35), the patch types its installer registers for a patch.
const (
	bodyMediaTypes  = "application/json, application/yaml, " + protobufMediaType
	patchMediaTypes = "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
)

// unsupportedMediaType is the 415 for a body in contentType, which is none of accepted.
func unsupportedMediaType(contentType, accepted string) error {
	return statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s; got %q", accepted, contentType))
}

func methodNotAllowed(r *http.Request, res *resource) error {
	return apierrors.NewMethodNotSupported(res.groupResource(), r.Method)
}

// notFoundPath is the answer for a path nothing is served at: kube-apiserver's go-restful
// container answers with NewGenericServerResponse, whose details are present but empty. Clients
// rely on that: kubectl debug reads details.name of a 404 to tell a missing subresource from a
// missing pod, and dereferences details to do so.
func notFoundPath(string) error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)
}

func successStatus(res *resource, name string, uid string) *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: name, Group: res.gv.Group, Kind: res.name, UID: types.UID(uid),
		},
	}
}

// envelopeTail is what the protobuf envelope (runtime.Unknown) ends with after the object's
// message: its contentEncoding and contentType fields, both empty, which the envelope always
// carries.
var envelopeTail = []byte{0x1a, 0x00, 0x22, 0x00}

// messageOffset finds where obj's own message is in raw, its encoding in the envelope: just
// before the envelope's tail. The message is checked byte for byte against obj's own encoding's
// size; 0 if it is not there.
func messageOffset(raw []byte, obj runtime.Object) int {
	sized, ok := obj.(interface{ Size() int })
	if !ok || !bytes.HasSuffix(raw, envelopeTail) {
		return 0
	}
	off := len(raw) - len(envelopeTail) - sized.Size()
	if off < len(protobufMagic) {
		return 0
	}
	// The message is the envelope's raw field: its length is the varint just before it.
	n, w := protowire.ConsumeVarint(raw[off-protowire.SizeVarint(uint64(sized.Size())) : off])
	if w <= 0 || n != uint64(sized.Size()) {
		return 0
	}
	return off
}

// protobufMagic starts every object in the protobuf envelope.
var protobufMagic = []byte("k8s\x00")

// protoListBody encodes a list in the protobuf envelope from its items' messages, as the list
// kind's own encoding would (its metadata, then each item), without encoding the items again.
func protoListBody(gvk schema.GroupVersionKind, listMeta metav1.ListMeta, items [][]byte) ([]byte, error) {
	meta, err := listMeta.Marshal()
	if err != nil {
		return nil, err
	}
	size := protowire.SizeTag(1) + protowire.SizeBytes(len(meta))
	for _, item := range items {
		size += protowire.SizeTag(2) + protowire.SizeBytes(len(item))
	}
	typeMeta := runtime.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}
	tm, err := typeMeta.Marshal()
	if err != nil {
		return nil, err
	}
	total := len(protobufMagic) + protowire.SizeTag(1) + protowire.SizeBytes(len(tm)) +
		protowire.SizeTag(2) + protowire.SizeBytes(size) + len(envelopeTail)
	out := make([]byte, 0, total)
	out = append(out, protobufMagic...)
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendBytes(out, tm)
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	out = protowire.AppendVarint(out, uint64(size))
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendBytes(out, meta)
	for _, item := range items {
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendBytes(out, item)
	}
	return append(out, envelopeTail...), nil
}
