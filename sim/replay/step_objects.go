package replay

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// APICreateObject creates a ConfigMap or a Secret through the API server, as `kubectl create`
// does: exactly one of its fields is set. A pod that references it (env, envFrom, volumes) sees
// it at its next look: the kubelet watches every object its pods reference.
type APICreateObject struct {
	ConfigMap *v1.ConfigMap `json:"configMap,omitempty"`
	Secret    *v1.Secret    `json:"secret,omitempty"`
}

// The kind's declarations: it needs the API server.
var (
	_ change     = (*APICreateObject)(nil)
	_ sourceUser = (*APICreateObject)(nil)
)

func (*APICreateObject) source() string { return podconfig.APISource }

func (a *APICreateObject) validate() error {
	var meta *metav1.ObjectMeta
	switch {
	case (a.ConfigMap == nil) == (a.Secret == nil):
		return errors.New("want exactly one of configMap and secret")
	case a.ConfigMap != nil:
		meta = &a.ConfigMap.ObjectMeta
	default:
		meta = &a.Secret.ObjectMeta
	}
	return required("metadata.name", meta.Name)
}

func (a *APICreateObject) apply(ctx context.Context, e *engine, _ *node) {
	var err error
	switch {
	case a.ConfigMap != nil:
		cm := a.ConfigMap.DeepCopy()
		if cm.Namespace == "" {
			cm.Namespace = metav1.NamespaceDefault
		}
		e.stepEvent(trace.KindAPICreateObject, "", "configmap "+cm.Namespace+"/"+cm.Name)
		_, err = e.client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	default:
		s := a.Secret.DeepCopy()
		if s.Namespace == "" {
			s.Namespace = metav1.NamespaceDefault
		}
		e.stepEvent(trace.KindAPICreateObject, "", "secret "+s.Namespace+"/"+s.Name)
		_, err = e.client.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
	}
	if err != nil {
		e.stepError(trace.KindAPICreateObject, fmt.Errorf("create: %w", err))
	}
}
