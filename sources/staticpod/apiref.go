package staticpod

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// apiReference is the PreventStaticPodAPIReferences check (beta, on by default since v1.34): it
// returns the plural resource of the first API object the pod references, or "" if none. A static
// pod cannot use API objects because the kubelet may run it before, or without, an API server.
// The order of the checks decides which resource an error names, and follows the kubelet's.
func apiReference(pod *v1.Pod) (string, error) {
	spec := &pod.Spec
	if spec.ServiceAccountName != "" {
		return "serviceaccounts", nil
	}
	if referencesSecret(spec) {
		return "secrets", nil
	}
	if referencesConfigMap(spec) {
		return "configmaps", nil
	}
	if len(spec.ResourceClaims) > 0 {
		return "resourceclaims", nil
	}
	for i := range spec.Volumes {
		vol := &spec.Volumes[i]
		s := &vol.VolumeSource
		switch {
		case s.AWSElasticBlockStore != nil, s.AzureDisk != nil, s.CephFS != nil, s.Cinder != nil,
			s.DownwardAPI != nil, s.EmptyDir != nil, s.FC != nil, s.FlexVolume != nil, s.Flocker != nil,
			s.GCEPersistentDisk != nil, s.GitRepo != nil, s.HostPath != nil, s.Image != nil, s.ISCSI != nil,
			s.NFS != nil, s.PhotonPersistentDisk != nil, s.PortworxVolume != nil, s.Quobyte != nil,
			s.RBD != nil, s.ScaleIO != nil, s.StorageOS != nil, s.VsphereVolume != nil:
			continue
		case s.ConfigMap != nil:
			return "configmaps (via configmap volumes)", nil
		case s.Secret != nil:
			return "secrets (via secret volumes)", nil
		case s.CSI != nil:
			return "csidrivers (via CSI volumes)", nil
		case s.Glusterfs != nil:
			return "endpoints (via glusterFS volumes)", nil
		case s.PersistentVolumeClaim != nil:
			return "persistentvolumeclaims", nil
		case s.Ephemeral != nil:
			return "persistentvolumeclaims (via ephemeral volumes)", nil
		case s.AzureFile != nil:
			return "secrets (via azureFile volumes)", nil
		case s.Projected != nil:
			for _, ps := range s.Projected.Sources {
				switch {
				case ps.ConfigMap != nil:
					return "configmaps (via projected volumes)", nil
				case ps.Secret != nil:
					return "secrets (via projected volumes)", nil
				case ps.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)", nil
				case ps.ClusterTrustBundle != nil:
					return "clustertrustbundles", nil
				case ps.PodCertificate != nil:
					return "podcertificates", nil
				case ps.DownwardAPI != nil:
					continue
				default:
					return "", fmt.Errorf("unknown source for projected volume %q", vol.Name)
				}
			}
		default:
			return "", fmt.Errorf("unknown volume type for volume  %q", vol.Name)
		}
	}
	return "", nil
}

// allContainers lists every container of the pod, init and ephemeral ones included.
func allContainers(spec *v1.PodSpec) []*v1.Container {
	out := make([]*v1.Container, 0, len(spec.InitContainers)+len(spec.Containers)+len(spec.EphemeralContainers))
	for i := range spec.InitContainers {
		out = append(out, &spec.InitContainers[i])
	}
	for i := range spec.Containers {
		out = append(out, &spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		out = append(out, (*v1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return out
}

// referencesSecret reports whether any field the kubelet's secret visitor walks names a Secret.
func referencesSecret(spec *v1.PodSpec) bool {
	if len(spec.ImagePullSecrets) > 0 {
		return true
	}
	for _, c := range allContainers(spec) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return true
			}
		}
	}
	for i := range spec.Volumes {
		s := &spec.Volumes[i].VolumeSource
		switch {
		case s.AzureFile != nil, s.Secret != nil,
			s.CephFS != nil && s.CephFS.SecretRef != nil,
			s.Cinder != nil && s.Cinder.SecretRef != nil,
			s.FlexVolume != nil && s.FlexVolume.SecretRef != nil,
			s.RBD != nil && s.RBD.SecretRef != nil,
			s.ScaleIO != nil && s.ScaleIO.SecretRef != nil,
			s.ISCSI != nil && s.ISCSI.SecretRef != nil,
			s.StorageOS != nil && s.StorageOS.SecretRef != nil,
			s.CSI != nil && s.CSI.NodePublishSecretRef != nil:
			return true
		case s.Projected != nil:
			for _, ps := range s.Projected.Sources {
				if ps.Secret != nil {
					return true
				}
			}
		}
	}
	return false
}

// referencesConfigMap reports whether any field the kubelet's configmap visitor walks names a
// ConfigMap.
func referencesConfigMap(spec *v1.PodSpec) bool {
	for _, c := range allContainers(spec) {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				return true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				return true
			}
		}
	}
	for i := range spec.Volumes {
		s := &spec.Volumes[i].VolumeSource
		if s.ConfigMap != nil {
			return true
		}
		if s.Projected != nil {
			for _, ps := range s.Projected.Sources {
				if ps.ConfigMap != nil {
					return true
				}
			}
		}
	}
	return false
}
