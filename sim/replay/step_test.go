package replay

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// TestStepKinds checks the step vocabulary: every key once, every kind either a change or an
// expectation, every change traced under its own key (a catalogue row of component scenario),
// and every kind whose body has a pod field routed by it to the pod's node.
func TestStepKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range stepKinds {
		if seen[k.name] {
			t.Errorf("stepKinds lists %s twice", k.name)
		}
		seen[k.name] = true
		a := k.new()
		_, isChange := a.(change)
		_, isExpectation := a.(expectation)
		if isChange == isExpectation {
			t.Errorf("%s (%T): change %v, expectation %v; want exactly one", k.name, a, isChange, isExpectation)
		}
		if isChange {
			if err := trace.Registered(trace.Event{Component: trace.Scenario, Event: trace.Kind(k.name)}); err != nil {
				t.Errorf("%s: %v", k.name, err)
			}
		}
		// A body that takes {"pod": "ns/name"} names a pod, and must say so.
		if strict, err := sigsjson.UnmarshalStrict([]byte(`{"pod":"ns/name"}`), a); err == nil && len(strict) == 0 {
			p, ok := a.(podNamer)
			if !ok || p.pod() != "ns/name" {
				t.Errorf("%s (%T) has a pod field but does not name its pod (podNamer)", k.name, a)
			}
		}
	}
}

// TestDecodeStep pins how a step is decoded: one action key whose body is strict-decoded into
// its kind, errors that name the key, and a null body taken for an absent one.
func TestDecodeStep(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		action     string // the decoded step's Action(); "" when decoding fails
		actions    int
		wantErr    string
	}{
		{"one action", `{"at":"1s","node":"n","removeManifest":{"name":"a"}}`, "removeManifest", 1, ""},
		{"no at", `{"restartKubelet":{}}`, "restartKubelet", 1, ""},
		{"two actions", `{"at":"1s","restartKubelet":{},"stopNode":{}}`, "", 2, ""},
		{"no action", `{"at":"1s"}`, "", 0, ""},
		{"null body is absent", `{"at":"1s","expect":null,"restartKubelet":{}}`, "restartKubelet", 1, ""},
		{"unknown key", `{"at":"1s","explode":{}}`, "", 0, `unknown field "explode"`},
		{"case matters", `{"At":"1s","restartKubelet":{}}`, "", 0, `unknown field "At"`},
		{"unknown body key", `{"at":"1s","expect":{"pod":"a/b","exitcode":1}}`, "", 0, `unknown field "expect.exitcode"`},
		{"nested unknown key", `{"apiCreatePod":{"pod":{"spec":{"containerz":[]}}}}`, "", 0, `unknown field "apiCreatePod.pod.spec.containerz"`},
		{"config map", `{"at":"1s","apiCreateObject":{"configMap":{"metadata":{"name":"app"},"data":{"k":"v"}}}}`, "apiCreateObject", 1, ""},
		{"unknown object key", `{"apiCreateObject":{"secret":{"strngData":{}}}}`, "", 0, `unknown field "apiCreateObject.secret.strngData"`},
		{"bad body type", `{"expect":{"ready":"maybe"}}`, "", 0, "expect: cannot unmarshal string"},
		{"bad at", `{"at":"soon","restartKubelet":{}}`, "", 0, `at: time: invalid duration "soon"`},
		{"not a mapping", `5`, "", 0, "a step is a mapping of at, an optional node and one action"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := decodeStep([]byte(tt.json))
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("decodeStep(%s) error = %v, want %q", tt.json, err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("decodeStep(%s) error = %v", tt.json, err)
			}
			if st.Action() != tt.action || st.actions != tt.actions {
				t.Errorf("decodeStep(%s) = action %q of %d, want %q of %d", tt.json, st.Action(), st.actions, tt.action, tt.actions)
			}
		})
	}
}

// TestAPICreateObjectValidate checks that apiCreateObject names exactly one object, with a name.
func TestAPICreateObjectValidate(t *testing.T) {
	named := metav1.ObjectMeta{Name: "app"}
	for _, tt := range []struct {
		name    string
		a       APICreateObject
		wantErr string
	}{
		{"config map", APICreateObject{ConfigMap: &v1.ConfigMap{ObjectMeta: named}}, ""},
		{"secret", APICreateObject{Secret: &v1.Secret{ObjectMeta: named}}, ""},
		{"neither", APICreateObject{}, "want exactly one of configMap and secret"},
		{"both", APICreateObject{ConfigMap: &v1.ConfigMap{ObjectMeta: named}, Secret: &v1.Secret{ObjectMeta: named}}, "want exactly one of configMap and secret"},
		{"no name", APICreateObject{Secret: &v1.Secret{}}, "metadata.name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.a.validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
