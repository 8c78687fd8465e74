package fakeapiserver

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/registry"
)

// DefaultServiceCIDR is the range cluster IPs are allocated from when Options.ServiceCIDR is not
// set: kube-apiserver's default --service-cluster-ip-range.
var DefaultServiceCIDR = netip.MustParsePrefix("10.0.0.0/24")

// kubernetesServicePort is the target port of the `kubernetes` Service: kube-apiserver's default
// --secure-port, which it points the Service at.
const kubernetesServicePort = 6443

// bootstrapKubernetesService creates the `kubernetes` Service of the default namespace if the
// store has none, as kube-apiserver's bootstrap controller does, with the first address of the
// service range and a UID derived from its name, not drawn from the store's random source.
func (s *Server) bootstrapKubernetesService() error {
	res := s.store.resource("services")
	return s.store.locked(func() error {
		if _, ok := s.store.get(res, metav1.NamespaceDefault, "kubernetes"); ok {
			return nil
		}
		first, _ := registry.ServiceRange(s.serviceCIDR)
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{
				Name: "kubernetes", Namespace: metav1.NamespaceDefault, CreationTimestamp: s.now(),
				UID:    bootstrapUID("default/kubernetes", s.clock.Now()),
				Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"},
			},
			Spec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{{
					Name: "https", Port: 443, TargetPort: intstr.FromInt32(kubernetesServicePort),
				}},
				ClusterIP: first.String(), ClusterIPs: []string{first.String()},
				IPFamilies:     []corev1.IPFamily{corev1.IPv4Protocol},
				IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
			},
		}
		registry.SetServiceDefaults(svc)
		if _, err := s.store.commit(res, watch.Added, svc, nil); err != nil {
			return fmt.Errorf("create service default/kubernetes: %w", err)
		}
		return nil
	})
}
