package registry

import (
	"errors"
	"iter"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// fakeStore holds Services and draws the same offset every time, so that the address and port
// an allocation picks follow from what is used alone.
type fakeStore struct {
	services []*corev1.Service
	offset   int
}

func (f *fakeStore) Services() iter.Seq[*corev1.Service] { return slices.Values(f.services) }
func (f *fakeStore) Intn(n int) int                      { return f.offset % n }
func (f *fakeStore) ServiceCIDR() netip.Prefix           { return netip.MustParsePrefix("10.0.0.0/24") }

func service(name, clusterIP string, typ corev1.ServiceType, nodePorts ...int32) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       corev1.ServiceSpec{Type: typ, ClusterIP: clusterIP},
	}
	if clusterIP != "" {
		svc.Spec.ClusterIPs = []string{clusterIP}
	}
	for i, np := range nodePorts {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Port: int32(80 + i), NodePort: np})
	}
	if len(nodePorts) == 0 {
		svc.Spec.Ports = []corev1.ServicePort{{Port: 80}}
	}
	return svc
}

func TestServicesBeginCreate(t *testing.T) {
	tests := []struct {
		name      string
		stored    []*corev1.Service
		svc       *corev1.Service
		dryRun    bool
		wantIPs   []string
		wantPorts []int32
		wantCode  int32 // the Status code of the error, 0 for none
	}{
		{
			// The upper part of a /24 starts after the 16 addresses kept for clients that choose.
			name:    "first free address of the upper part",
			svc:     service("a", "", corev1.ServiceTypeClusterIP),
			wantIPs: []string{"10.0.0.17"}, wantPorts: []int32{0},
		},
		{
			name:    "a used address is skipped",
			stored:  []*corev1.Service{service("b", "10.0.0.17", corev1.ServiceTypeClusterIP)},
			svc:     service("a", "", corev1.ServiceTypeClusterIP),
			wantIPs: []string{"10.0.0.18"}, wantPorts: []int32{0},
		},
		{
			name:    "the Service's own stored address is not in use",
			stored:  []*corev1.Service{service("a", "10.0.0.17", corev1.ServiceTypeClusterIP)},
			svc:     service("a", "10.0.0.17", corev1.ServiceTypeClusterIP),
			wantIPs: []string{"10.0.0.17"}, wantPorts: []int32{0},
		},
		{
			name:     "a requested address another Service has",
			stored:   []*corev1.Service{service("b", "10.0.0.5", corev1.ServiceTypeClusterIP)},
			svc:      service("a", "10.0.0.5", corev1.ServiceTypeClusterIP),
			wantCode: 422,
		},
		{
			name:    "a dry run of a requested address another Service has",
			stored:  []*corev1.Service{service("b", "10.0.0.5", corev1.ServiceTypeClusterIP)},
			svc:     service("a", "10.0.0.5", corev1.ServiceTypeClusterIP),
			dryRun:  true,
			wantIPs: []string{"10.0.0.5"}, wantPorts: []int32{0},
		},
		{
			name:    "a dry run is given the network address",
			svc:     service("a", "", corev1.ServiceTypeClusterIP),
			dryRun:  true,
			wantIPs: []string{"10.0.0.0"}, wantPorts: []int32{0},
		},
		{
			name:     "a requested address out of range",
			svc:      service("a", "10.0.1.5", corev1.ServiceTypeClusterIP),
			wantCode: 422,
		},
		{
			// The upper part of the node port range starts after 86 ports.
			name:    "a node port is drawn from the upper part",
			svc:     service("a", "", corev1.ServiceTypeNodePort, 0),
			wantIPs: []string{"10.0.0.17"}, wantPorts: []int32{30086},
		},
		{
			name:    "a node port another Service has is skipped",
			stored:  []*corev1.Service{service("b", "10.0.0.20", corev1.ServiceTypeNodePort, 30086)},
			svc:     service("a", "", corev1.ServiceTypeNodePort, 0),
			wantIPs: []string{"10.0.0.17"}, wantPorts: []int32{30087},
		},
		{
			name:     "a requested node port another Service has",
			stored:   []*corev1.Service{service("b", "10.0.0.20", corev1.ServiceTypeNodePort, 30500)},
			svc:      service("a", "", corev1.ServiceTypeNodePort, 30500),
			wantCode: 422,
		},
		{
			name:     "a requested node port out of range",
			svc:      service("a", "", corev1.ServiceTypeNodePort, 8080),
			wantCode: 422,
		},
		{
			name:    "an ExternalName Service gets neither",
			svc:     &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
			wantIPs: nil, wantPorts: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &fakeStore{services: tt.stored}
			err := Services().BeginCreate(st, tt.svc, tt.dryRun)
			if tt.wantCode != 0 {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tt.wantCode {
					t.Fatalf("BeginCreate() = %v, want a Status error with code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("BeginCreate() = %v", err)
			}
			if diff := cmp.Diff(tt.wantIPs, tt.svc.Spec.ClusterIPs); diff != "" {
				t.Errorf("clusterIPs (-want +got):\n%s", diff)
			}
			var ports []int32
			for _, p := range tt.svc.Spec.Ports {
				ports = append(ports, p.NodePort)
			}
			if diff := cmp.Diff(tt.wantPorts, ports); diff != "" {
				t.Errorf("node ports (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServicesBeginUpdateKeepsAllocations(t *testing.T) {
	old := service("a", "10.0.0.30", corev1.ServiceTypeNodePort, 31000)
	SetServiceDefaults(old)
	old.Spec.ClusterIPs = []string{"10.0.0.30"}
	old.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	old.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	next := old.DeepCopy()
	st := &fakeStore{services: []*corev1.Service{old}}
	if err := Services().BeginUpdate(st, old, next, false); err != nil {
		t.Fatalf("BeginUpdate() = %v", err)
	}
	if diff := cmp.Diff(old.Spec, next.Spec); diff != "" {
		t.Errorf("spec changed by an update that needs nothing new (-old +new):\n%s", diff)
	}
}
