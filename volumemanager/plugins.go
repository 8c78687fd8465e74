package volumemanager

import (
	"errors"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The errors of a standalone kubelet's volume host and projected volume plugin.
var (
	errStandalone = errors.New("not supported due to running kubelet in standalone mode")
)

// setUp is the volume plugin's SetUp, as far as a node without disks has one: a Secret or
// ConfigMap volume needs its object (and the keys it names), unless optional; a projected volume
// needs each of its sources, the service account token included; every other volume (emptyDir,
// hostPath, downwardAPI, and the storage a simulated node does not have) is set up at once.
func (m *Manager) setUp(pod *v1.Pod, v *desiredVolume) error {
	src := v.source
	switch {
	case src.Secret != nil:
		return m.secretPayload(pod.Namespace, src.Secret.SecretName, src.Secret.Items, isTrue(src.Secret.Optional))
	case src.ConfigMap != nil:
		return m.configMapPayload(pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, isTrue(src.ConfigMap.Optional))
	case src.Projected != nil:
		return m.projectedPayload(pod, v.name, src.Projected)
	}
	return nil
}

// secretPayload is the secret volume's SetUpAt and MakePayload, for what can fail.
func (m *Manager) secretPayload(namespace, name string, items []v1.KeyToPath, optional bool) error {
	if m.opts.Secrets == nil {
		return errStandalone
	}
	secret, err := m.opts.Secrets.GetSecret(namespace, name)
	if err != nil {
		if !(apierrors.IsNotFound(err) && optional) {
			return err
		}
		secret = &v1.Secret{}
	}
	for _, ktp := range items {
		if _, ok := secret.Data[ktp.Key]; !ok && !optional {
			return fmt.Errorf("references non-existent secret key: %s", ktp.Key)
		}
	}
	return nil
}

// configMapPayload is the configMap volume's SetUpAt and MakePayload, for what can fail.
func (m *Manager) configMapPayload(namespace, name string, items []v1.KeyToPath, optional bool) error {
	if m.opts.ConfigMaps == nil {
		return errStandalone
	}
	cm, err := m.opts.ConfigMaps.GetConfigMap(namespace, name)
	if err != nil {
		if !(apierrors.IsNotFound(err) && optional) {
			return err
		}
		cm = &v1.ConfigMap{}
	}
	for _, ktp := range items {
		_, inData := cm.Data[ktp.Key]
		_, inBinary := cm.BinaryData[ktp.Key]
		if !inData && !inBinary && !optional {
			return fmt.Errorf("configmap references non-existent config key: %s", ktp.Key)
		}
	}
	return nil
}

// projectedPayload is the projected volume's collectData: every source is tried, and the
// failures are aggregated.
func (m *Manager) projectedPayload(pod *v1.Pod, volName string, src *v1.ProjectedVolumeSource) error {
	if m.opts.Secrets == nil || m.opts.ConfigMaps == nil || m.opts.Tokens == nil {
		return fmt.Errorf("cannot setup projected volume %v because kube client is not configured", volName)
	}
	var errs []error
	for _, s := range src.Sources {
		switch {
		case s.Secret != nil:
			errs = append(errs, m.secretPayload(pod.Namespace, s.Secret.Name, s.Secret.Items, isTrue(s.Secret.Optional)))
		case s.ConfigMap != nil:
			errs = append(errs, m.configMapPayload(pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, isTrue(s.ConfigMap.Optional)))
		case s.ServiceAccountToken != nil:
			var auds []string
			if s.ServiceAccountToken.Audience != "" {
				auds = []string{s.ServiceAccountToken.Audience}
			}
			_, err := m.opts.Tokens.GetServiceAccountToken(pod.Namespace, pod.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{
					Audiences:         auds,
					ExpirationSeconds: s.ServiceAccountToken.ExpirationSeconds,
					BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
				},
			})
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func isTrue(b *bool) bool { return b != nil && *b }
