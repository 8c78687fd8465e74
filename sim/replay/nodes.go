package replay

import (
	"context"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// procFor returns the node a step acts on or checks: the one it names; else the node that has
// seen the step's pod, or the node the API server binds it to; else the first node.
func (e *engine) procFor(ctx context.Context, st *Step) *proc {
	if len(e.procs) == 1 {
		return e.procs[0]
	}
	if st.Node != "" {
		for _, p := range e.procs {
			if p.name == st.Node {
				return p
			}
		}
	}
	key := st.podKey()
	if key == "" {
		return e.procs[0]
	}
	for _, p := range e.procs {
		if _, ok := p.uids[key]; ok {
			return p
		}
	}
	if e.client != nil {
		if ns, name, ok := strings.Cut(key, "/"); ok {
			if pod, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				for _, p := range e.procs {
					if p.name == pod.Spec.NodeName {
						return p
					}
				}
			}
		}
	}
	return e.procs[0]
}

// podKey returns the "namespace/name" the step's action names in its Pod field, if it has one.
// It reads the field by name so that every action with a pod is covered, present and future.
func (st *Step) podKey() string {
	v := reflect.ValueOf(st).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.Struct {
			continue
		}
		if pod := f.Elem().FieldByName("Pod"); pod.IsValid() && pod.Kind() == reflect.String {
			return pod.String()
		}
		return ""
	}
	return ""
}
