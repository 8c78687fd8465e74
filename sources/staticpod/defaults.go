package staticpod

import (
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
)

// setSchemeDefaults applies what the kubelet's universal decoder does to a static pod: the core/v1
// scheme defaults, plus the field normalisation its round trip through the internal type causes.
func setSchemeDefaults(pod *v1.Pod) {
	apidefaults.SetPodDefaults(pod)
	normalizeStatusIPs(&pod.Status)
}

// normalizeStatusIPs reproduces the v1 → internal → v1 round trip: the internal status keeps only
// the lists, and podIP/hostIP are regenerated from their first entries.
func normalizeStatusIPs(s *v1.PodStatus) {
	if len(s.PodIPs) == 0 && s.PodIP != "" {
		s.PodIPs = []v1.PodIP{{IP: s.PodIP}}
	}
	if len(s.PodIPs) > 0 {
		s.PodIP = s.PodIPs[0].IP
	}
	if len(s.HostIPs) == 0 && s.HostIP != "" {
		s.HostIPs = []v1.HostIP{{IP: s.HostIP}}
	}
	if len(s.HostIPs) > 0 {
		s.HostIP = s.HostIPs[0].IP
	}
}
