package fakeapiserver

import (
	"crypto/sha256"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The ServiceAccount admission plugin's token volume (plugin/pkg/admission/serviceaccount,
// mountServiceAccountToken): unless the pod or its service account turns automounting off,
// every container and init container that mounts nothing at the token path gets the volume
// kube-api-access-<5 random characters> there, read-only; the volume projects a service account
// token, the namespace's kube-root-ca.crt and the pod's namespace. A pod that already has a
// kube-api-access-* volume keeps it.

const (
	// tokenVolumePrefix is ServiceAccountVolumeName and the dash generateName appends to.
	tokenVolumePrefix = "kube-api-access-"
	// tokenMountPath is DefaultAPITokenMountPath.
	tokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// shouldAutomount is the plugin's shouldAutomount: the pod's choice, else the service
// account's, else yes.
func shouldAutomount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountServiceAccountToken mounts the token volume in pod. A new volume's suffix is derived from
// the pod's namespace, name (or generateName) and the store's resource version rather than drawn
// from the server's random source, so that modelling the volume changed no UID or generated name
// a replay draws (docs/fidelity.md). The caller holds the store lock.
func (s *Server) mountServiceAccountToken(pod *corev1.Pod) {
	name, has := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, tokenVolumePrefix) {
			name, has = v.Name, true
			break
		}
	}
	if name == "" {
		name = tokenVolumePrefix + derivedSuffix(fmt.Sprintf("%s/%s/%s/%d", pod.Namespace, pod.Name, pod.GenerateName, s.store.rv))
	}
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: tokenMountPath}
	needed := false
	for _, containers := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range containers {
			c := &containers[i]
			mounted := false
			for _, m := range c.VolumeMounts {
				if m.MountPath == tokenMountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				c.VolumeMounts = append(c.VolumeMounts, mount)
				needed = true
			}
		}
	}
	if !has && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: tokenVolumeSource()}})
	}
}

// tokenVolumeSource is the plugin's TokenVolumeSource, field for field.
func tokenVolumeSource() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](warnOnlyBoundTokenExpirationSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: rootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: rootCAKey, Path: rootCAKey}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}
}

// derivedSuffix is a generateName suffix (5 characters of kube-apiserver's alphabet) derived from
// key.
func derivedSuffix(key string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	sum := sha256.Sum256([]byte(key))
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(b)
}
