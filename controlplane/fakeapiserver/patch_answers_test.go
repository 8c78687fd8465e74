package fakeapiserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStrategicMergePatchAnswers sends bad and odd strategic merge patches of a pod's status, each
// to a pod of its own, and wants kube-apiserver v1.35's answer to each: its status code, reason,
// message and warnings. Each was checked against kube-apiserver's code (strategicPatchObject,
// applyPatchToObject and interpretStrategicMergePatchError in
// staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go, and ErrorToAPIStatus for an
// error that is no Status): a patch that is not a JSON object is 400 with the JSON decoder's
// message; a malformed directive is the merge's 400 or, for an unknown $patch or a
// $setElementOrder that is no list, 500 with no reason; a value that does not fit its field,
// and with Strict an unknown or duplicate field, is 422 Invalid naming the patch as Go prints
// its maps; with Warn (the default) those fields are warnings and with Ignore nothing; a
// number with no fraction fits an integer field whatever its size (the converter's rule); the
// kind and apiVersion a patch sets are ignored. The patched object's identity is checked after
// the merge as patcher.applyPatch and Store.Update check it: a namespace or name other than the
// URL's, or no name (a patch that removes it or replaces the metadata: checkName's
// errEmptyName), is 400; a resource version that is no number is ObjectResourceVersion's parse
// error, 500 with no reason; a stale one 409; a UID other than the stored one (a patch carries
// no UID precondition) 422, the field being immutable, after the resource version's checks.
func TestStrategicMergePatchAnswers(t *testing.T) {
	tests := []struct {
		name, query, body string
		code              int
		reason            metav1.StatusReason
		message           string
		warnings          []string
	}{
		{"wrong type string", "", "{\"status\":{\"phase\":1}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[phase:1]]\": cannot convert int64 to v1.PodPhase", []string(nil)},
		{"wrong type time", "", "{\"status\":{\"startTime\":5}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[startTime:5]]\": json: cannot unmarshal number into Go value of type string", []string(nil)},
		{"wrong type bool", "", "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"ready\":\"yes\"}]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[containerStatuses:[map[name:c ready:yes]]]]\": unrecognized type: bool", []string(nil)},
		{"wrong type int", "", "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":\"two\"}]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[containerStatuses:[map[name:c restartCount:two]]]]\": unrecognized type: int32", []string(nil)},
		{"int overflow", "", "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":1e20}]}}", 200, "", "", []string(nil)},
		{"float for int", "", "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":1.5}]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[containerStatuses:[map[name:c restartCount:1.5]]]]\": cannot convert float64 to int32", []string(nil)},
		{"bad quantity", "", "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"allocatedResources\":{\"cpu\":\"abc\"}}]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[containerStatuses:[map[allocatedResources:map[cpu:abc] name:c]]]]\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", []string(nil)},
		{"object for list", "", "{\"status\":{\"podIPs\":{\"ip\":\"10.0.0.1\"}}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[podIPs:map[ip:10.0.0.1]]]\": cannot restore slice from map", []string(nil)},
		{"string for list", "", "{\"status\":{\"conditions\":\"Ready\"}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[conditions:Ready]]\": cannot restore slice from string", []string(nil)},
		{"list of numbers", "", "{\"status\":{\"conditions\":[1,2]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[conditions:[1 2]]]\": cannot restore struct from: int64", []string(nil)},
		{"list for object", "", "{\"status\":[]}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:[]]\": cannot restore struct from: slice", []string(nil)},
		{"unknown field default", "", "{\"status\":{\"bogus\":1}}", 200, "", "", []string{"299 - \"unknown field \\\"status.bogus\\\"\""}},
		{"unknown field Ignore", "?fieldValidation=Ignore", "{\"status\":{\"bogus\":1}}", 200, "", "", []string(nil)},
		{"unknown field Warn", "?fieldValidation=Warn", "{\"status\":{\"bogus\":1}}", 200, "", "", []string{"299 - \"unknown field \\\"status.bogus\\\"\""}},
		{"unknown field Strict", "?fieldValidation=Strict", "{\"status\":{\"bogus\":1}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[bogus:1]]\": strict decoding error: unknown field \"status.bogus\"", []string(nil)},
		{"unknown nested Strict", "?fieldValidation=Strict", "{\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"bogus\":1}]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[containerStatuses:[map[bogus:1 name:c]]]]\": strict decoding error: unknown field \"status.containerStatuses[0].bogus\"", []string(nil)},
		{"unknown object field Strict", "?fieldValidation=Strict", "{\"status\":{\"bogus\":{\"a\":1}}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[bogus:map[a:1]]]\": strict decoding error: unknown field \"status.bogus\"", []string(nil)},
		// The merge deletes from the patch map the list that $setElementOrder orders (the message
		// prints the map after the merge, as kube-apiserver's does); the merged maps hold the field.
		{"unknown field in ordered list Strict", "?fieldValidation=Strict", "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Ready\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"bogus\":1}]}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[]]\": strict decoding error: unknown field \"status.conditions[0].bogus\"", []string(nil)},
		{"unknown field in ordered list Warn", "", "{\"status\":{\"$setElementOrder/conditions\":[{\"type\":\"Ready\"}],\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"bogus\":1}]}}", 200, "", "", []string{"299 - \"unknown field \\\"status.conditions[0].bogus\\\"\""}},
		{"unknown object field Ignore", "?fieldValidation=Ignore", "{\"status\":{\"bogus\":{\"a\":1}}}", 200, "", "", []string(nil)},
		{"duplicate Strict", "?fieldValidation=Strict", "{\"status\":{\"phase\":\"Running\",\"phase\":\"Pending\"}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[status:map[phase:Pending]]\": strict decoding error: duplicate field \"status.phase\"", []string(nil)},
		{"duplicate Warn", "?fieldValidation=Warn", "{\"status\":{\"phase\":\"Running\",\"phase\":\"Pending\"}}", 200, "", "", []string{"299 - \"duplicate field \\\"status.phase\\\"\""}},
		{"duplicate Ignore", "?fieldValidation=Ignore", "{\"status\":{\"phase\":\"Running\",\"phase\":\"Pending\"}}", 200, "", "", []string(nil)},
		{"bad fieldValidation", "?fieldValidation=Loud", "{\"status\":{\"phase\":\"Running\"}}", 400, "BadRequest", "fieldValidation must be one of Ignore, Warn or Strict, got \"Loud\"", []string(nil)},
		{"bad directive", "", "{\"status\":{\"$patch\":\"bogus\"}}", 500, "", "unknown patch type: bogus in map: map[$patch:bogus]", []string(nil)},
		{"bad list directive", "", "{\"status\":{\"conditions\":[{\"$patch\":\"bogus\",\"type\":\"Ready\"}]}}", 200, "", "", []string(nil)},
		{"delete directive status", "", "{\"status\":{\"$patch\":\"delete\"}}", 200, "", "", []string(nil)},
		{"replace directive status", "", "{\"status\":{\"$patch\":\"replace\",\"phase\":\"Running\"}}", 200, "", "", []string(nil)},
		{"delete directive top", "", "{\"$patch\":\"delete\"}", 400, "BadRequest", "the name of the object (p based on URL) was undeterminable: name must be provided", []string(nil)},
		{"setElementOrder bad", "", "{\"status\":{\"$setElementOrder/conditions\":\"x\"}}", 500, "", "expected a []interface {}, but received a string", []string(nil)},
		{"deleteFromPrimitiveList bad", "", "{\"status\":{\"$deleteFromPrimitiveList/conditions\":[\"a\"]}}", 200, "", "", []string(nil)},
		{"retainKeys bad", "", "{\"status\":{\"$retainKeys\":\"x\"}}", 400, "BadRequest", "invalid patch format of retainKeys", []string(nil)},
		{"null conditions", "", "{\"status\":{\"conditions\":null}}", 200, "", "", []string(nil)},
		{"null status", "", "{\"status\":null}", 200, "", "", []string(nil)},
		{"null labels", "", "{\"metadata\":{\"labels\":null}}", 200, "", "", []string(nil)},
		{"null phase", "", "{\"status\":{\"phase\":null}}", 200, "", "", []string(nil)},
		{"metadata labels", "", "{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"status\":{\"phase\":\"Running\"}}", 200, "", "", []string(nil)},
		{"metadata name", "", "{\"metadata\":{\"name\":\"other\"}}", 400, "BadRequest", "the name of the object (other) does not match the name on the URL (p)", []string(nil)},
		{"metadata namespace", "", "{\"metadata\":{\"namespace\":\"other\"}}", 400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request", []string(nil)},
		{"metadata uid", "", "{\"metadata\":{\"uid\":\"x\"}}", 422, "Invalid", "Pod \"p\" is invalid: metadata.uid: Invalid value: \"x\": field is immutable", []string(nil)},
		{"metadata uid and stale rv", "", "{\"metadata\":{\"uid\":\"x\",\"resourceVersion\":\"1\"}}", 409, "Conflict", "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again", []string(nil)},
		{"metadata uid null", "", "{\"metadata\":{\"uid\":null}}", 200, "", "", []string(nil)},
		{"metadata name null", "", "{\"metadata\":{\"name\":null}}", 400, "BadRequest", "the name of the object (p based on URL) was undeterminable: name must be provided", []string(nil)},
		{"metadata replaced", "", "{\"metadata\":{\"$patch\":\"replace\",\"labels\":{\"a\":\"b\"}}}", 400, "BadRequest", "the name of the object (p based on URL) was undeterminable: name must be provided", []string(nil)},
		{"metadata name and namespace", "", "{\"metadata\":{\"name\":\"other\",\"namespace\":\"other\"}}", 400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request", []string(nil)},
		{"metadata stale rv", "", "{\"metadata\":{\"resourceVersion\":\"1\"}}", 409, "Conflict", "Operation cannot be fulfilled on pods \"p\": the object has been modified; please apply your changes to the latest version and try again", []string(nil)},
		{"metadata bad rv", "", "{\"metadata\":{\"resourceVersion\":\"abc\"}}", 500, "", "strconv.ParseUint: parsing \"abc\": invalid syntax", []string(nil)},
		{"kind", "", "{\"kind\":\"Node\"}", 200, "", "", []string(nil)},
		{"apiVersion", "", "{\"apiVersion\":\"v2\"}", 200, "", "", []string(nil)},
		{"empty patch", "", "{}", 200, "", "", []string(nil)},
		{"empty body", "", "", 400, "BadRequest", "unexpected end of JSON input", []string(nil)},
		{"not json", "", "{\"status\":", 400, "BadRequest", "unexpected end of JSON input", []string(nil)},
		{"array patch", "", "[]", 400, "BadRequest", "json: cannot unmarshal array into Go value of type map[string]interface {}", []string(nil)},
		{"string patch", "", "\"x\"", 400, "BadRequest", "json: cannot unmarshal string into Go value of type map[string]interface {}", []string(nil)},
		{"spec in status patch", "", "{\"spec\":{\"nodeName\":\"other\"}}", 200, "", "", []string(nil)},
		{"invalid phase", "", "{\"status\":{\"phase\":\"Bogus\"}}", 200, "", "", []string(nil)},
		{"managedFields", "", "{\"metadata\":{\"managedFields\":[{\"manager\":\"x\",\"operation\":\"Update\",\"apiVersion\":\"v1\"}]}}", 200, "", "", []string(nil)},
		{"managedFields bad", "", "{\"metadata\":{\"managedFields\":\"x\"}}", 422, "Invalid", " \"\" is invalid: patch: Invalid value: \"map[metadata:map[managedFields:x]]\": cannot restore slice from string", []string(nil)},
	}
	for _, tc := range tests {
		srv := newServer(t, testOptions())
		h := srv.Handler()
		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); w.Code != http.StatusCreated {
			t.Fatalf("create p = %d %s", w.Code, w.Body.String())
		}
		w := do(h, "PATCH", "/api/v1/namespaces/default/pods/p/status"+tc.query, "application/strategic-merge-patch+json", tc.body)
		if w.Code != tc.code {
			t.Errorf("%s: code = %d, want %d (%s)", tc.name, w.Code, tc.code, w.Body.String())
			continue
		}
		if diff := cmp.Diff(tc.warnings, w.Header().Values("Warning")); diff != "" {
			t.Errorf("%s: warnings (-want +got):\n%s", tc.name, diff)
		}
		if tc.code == http.StatusOK {
			// What was stored is a pod, whatever kind the patch named.
			got := do(h, "GET", "/api/v1/namespaces/default/pods/p", "", "")
			var meta metav1.TypeMeta
			if err := json.Unmarshal(got.Body.Bytes(), &meta); err != nil || meta != (metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}) {
				t.Errorf("%s: stored %+v (%v), want a v1 Pod", tc.name, meta, err)
			}
			continue
		}
		st := decodeStatus(t, w)
		if st.Reason != tc.reason || st.Message != tc.message {
			t.Errorf("%s: answer %q %q, want %q %q", tc.name, st.Reason, st.Message, tc.reason, tc.message)
		}
		switch {
		case st.Reason != metav1.StatusReasonInvalid:
		case strings.HasPrefix(st.Message, ` "" is invalid: patch:`):
			// kube-apiserver's NewInvalid of a field error on the path "patch", with no kind or name.
			if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "patch" ||
				st.Details.Causes[0].Type != metav1.CauseTypeFieldValueInvalid || st.Details.Kind != "" || st.Details.Name != "" {
				t.Errorf("%s: details %+v, want one cause of the field patch", tc.name, st.Details)
			}
		default:
			// BeforeUpdate's NewInvalid of the pod: validateCommonFields and the status strategy's
			// ValidateObjectMetaUpdate each report the immutable UID.
			want := metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Message: `Invalid value: "x": field is immutable`, Field: "metadata.uid"}
			if st.Details == nil || st.Details.Kind != "Pod" || st.Details.Name != "p" ||
				!cmp.Equal(st.Details.Causes, []metav1.StatusCause{want, want}) {
				t.Errorf("%s: details %+v, want the pod's two causes of metadata.uid", tc.name, st.Details)
			}
		}
	}
}

// TestStrategicMergePatchOfADeletedPod wants a status patch of a pod that was deleted answered
// 404, and a bad patch of a pod's main resource answered as a status patch is.
func TestStrategicMergePatchOfADeletedPod(t *testing.T) {
	srv := newServer(t, testOptions())
	h := srv.Handler()
	if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); w.Code != http.StatusCreated {
		t.Fatalf("create p = %d %s", w.Code, w.Body.String())
	}
	w := do(h, "PATCH", "/api/v1/namespaces/default/pods/p", "application/strategic-merge-patch+json", `{"metadata":{"labels":{"a":1}}}`)
	st := decodeStatus(t, w)
	if want := ` "" is invalid: patch: Invalid value: "map[metadata:map[labels:map[a:1]]]": cannot convert int64 to string`; w.Code != 422 || st.Message != want {
		t.Errorf("bad label patch = %d %q, want 422 %q", w.Code, st.Message, want)
	}
	if w := do(h, "DELETE", "/api/v1/namespaces/default/pods/p", "", ""); w.Code != http.StatusOK {
		t.Fatalf("delete p = %d %s", w.Code, w.Body.String())
	}
	w = do(h, "PATCH", "/api/v1/namespaces/default/pods/p/status", "application/strategic-merge-patch+json", `{"status":{"phase":"Running"}}`)
	st = decodeStatus(t, w)
	if w.Code != 404 || st.Reason != metav1.StatusReasonNotFound || st.Message != `pods "p" not found` {
		t.Errorf("patch of a deleted pod = %d %s %q, want 404 NotFound", w.Code, st.Reason, st.Message)
	}
}

// TestPatchAndUpdateIdentityAnswers wants kube-apiserver v1.35's answers to writes that change
// a pod's identity, for each patch type on the pod and on its status and for PUT. A patch goes
// through patcher.applyPatch (checkName: no name is 400) and Store.Update with no UID
// precondition, so a UID other than the stored one is BeforeUpdate's 422 after the resource
// version's checks; a PUT's UID is the storage's precondition, checked first: 409. A resource
// version that is no number is 500 for both (ObjectResourceVersion's parse error, no Status).
func TestPatchAndUpdateIdentityAnswers(t *testing.T) {
	const (
		smp   = "application/strategic-merge-patch+json"
		merge = "application/merge-patch+json"
		jsonp = "application/json-patch+json"
	)
	const (
		noName    = "the name of the object (p based on URL) was undeterminable: name must be provided"
		immutable = `Pod "p" is invalid: metadata.uid: Invalid value: "x": field is immutable`
		badRV     = `strconv.ParseUint: parsing "abc": invalid syntax`
		stale     = `Operation cannot be fulfilled on pods "p": the object has been modified; please apply your changes to the latest version and try again`
		uidPre    = `Operation cannot be fulfilled on pods "p": Precondition failed: UID in precondition: x, UID in object meta: 52fdfc07-2182-454f-963f-5f0f9a621d72`
	)
	type write struct {
		method, contentType, body string
		code                      int
		message                   string
	}
	put := func(meta string, code int, message string) write {
		return write{"PUT", "application/json", `{"apiVersion":"v1","kind":"Pod","metadata":{` + meta + `},"spec":{"containers":[{"name":"c","image":"i"}]}}`, code, message}
	}
	for _, tc := range []struct {
		name  string
		write write
	}{
		{"smp uid", write{"PATCH", smp, `{"metadata":{"uid":"x"}}`, 422, immutable}},
		{"merge uid", write{"PATCH", merge, `{"metadata":{"uid":"x"}}`, 422, immutable}},
		{"json patch uid", write{"PATCH", jsonp, `[{"op":"replace","path":"/metadata/uid","value":"x"}]`, 422, immutable}},
		{"smp uid and stale rv", write{"PATCH", smp, `{"metadata":{"uid":"x","resourceVersion":"1"}}`, 409, stale}},
		{"smp no name", write{"PATCH", smp, `{"metadata":{"name":null}}`, 400, noName}},
		{"merge no name", write{"PATCH", merge, `{"metadata":{"name":null}}`, 400, noName}},
		{"json patch no name", write{"PATCH", jsonp, `[{"op":"remove","path":"/metadata/name"}]`, 400, noName}},
		{"smp bad rv", write{"PATCH", smp, `{"metadata":{"resourceVersion":"abc"}}`, 500, badRV}},
		{"merge bad rv", write{"PATCH", merge, `{"metadata":{"resourceVersion":"abc"}}`, 500, badRV}},
		{"put uid", put(`"name":"p","uid":"x"`, 409, uidPre)},
		{"put uid and stale rv", put(`"name":"p","uid":"x","resourceVersion":"1"`, 409, uidPre)},
		{"put no name", put(`"labels":{"a":"b"}`, 400, noName)},
		{"put bad rv", put(`"name":"p","resourceVersion":"abc"`, 500, badRV)},
	} {
		for _, path := range []string{"/api/v1/namespaces/default/pods/p", "/api/v1/namespaces/default/pods/p/status"} {
			srv := newServer(t, testOptions())
			h := srv.Handler()
			if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", podJSON); w.Code != http.StatusCreated {
				t.Fatalf("create p = %d %s", w.Code, w.Body.String())
			}
			w := do(h, tc.write.method, path, tc.write.contentType, tc.write.body)
			st := decodeStatus(t, w)
			if w.Code != tc.write.code || st.Message != tc.write.message {
				t.Errorf("%s %s: %d %q, want %d %q", tc.name, path, w.Code, st.Message, tc.write.code, tc.write.message)
			}
		}
	}
}
