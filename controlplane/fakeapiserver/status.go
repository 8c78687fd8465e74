package fakeapiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// writeError answers with err as a metav1.Status. Errors that are not API errors become 500.
func writeError(w http.ResponseWriter, err error) {
	st := failureStatus(err)
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

func notAcceptable(accept string) error {
	return statusError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("only the following media types are accepted: application/json, application/yaml; got %q", accept))
}

func unsupportedMediaType(contentType string) error {
	return statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml; got %q", contentType))
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
