package registry

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"
)

// Services are stored as kube-apiserver's service registry stores them on a single-stack IPv4
// cluster: defaulted (type ClusterIP, session affinity None, each port's protocol TCP and target
// port its port, the traffic policies Cluster), given a cluster IP from the service CIDR
// (Store.ServiceCIDR, by default kube-apiserver's default --service-cluster-ip-range) and node
// ports from 30000-32767 with its allocators' rules, and validated. The server creates the
// `kubernetes` Service of the default namespace at start, with the first address of the range
// (ServiceRange), as the API server's bootstrap controller does. No load balancer is provisioned,
// and no controller fills Endpoints or EndpointSlices (docs/fidelity.md).

// Services is the service strategy, with the allocations of the service REST storage.
func Services() Strategy {
	return Strategy{
		NewObj:         func() runtime.Object { return &corev1.Service{} },
		FieldSet:       serviceFields,
		PrepareCreate:  prepareServiceCreate,
		BeginCreate:    beginServiceCreate,
		Validate:       validateService,
		PrepareUpdate:  prepareServiceUpdate,
		BeginUpdate:    beginServiceUpdate,
		ValidateUpdate: validateServiceUpdate,
		Columns:        serviceColumns,
		Cells:          serviceCells,
	}
}

func serviceFields(obj runtime.Object) fields.Set {
	svc := obj.(*corev1.Service)
	set := MetaFields(obj)
	set["spec.clusterIP"] = svc.Spec.ClusterIP
	set["spec.type"] = string(svc.Spec.Type)
	return set
}

// SetServiceDefaults is SetDefaults_Service.
func SetServiceDefaults(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if spec.SessionAffinity == corev1.ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == corev1.ServiceAffinityClientIP &&
		(spec.SessionAffinityConfig == nil || spec.SessionAffinityConfig.ClientIP == nil || spec.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil) {
		spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{
			TimeoutSeconds: ptr.To(corev1.DefaultClientIPServiceAffinitySeconds),
		}}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(svc) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && spec.Type != corev1.ServiceTypeExternalName {
		spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		spec.AllocateLoadBalancerNodePorts = ptr.To(true)
	}
}

func externallyAccessible(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer || svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

// prepareServiceCreate is the defaulting and the strategy's PrepareForCreate: the status is the
// server's to write.
func prepareServiceCreate(obj runtime.Object) {
	svc := obj.(*corev1.Service)
	SetServiceDefaults(svc)
	svc.Status = corev1.ServiceStatus{}
}

// prepareServiceUpdate is the defaulting, PrepareForUpdate (the status is kept, fields of the old
// type dropped) and the registry's patchAllocatedValues and normalizeClusterIPs: an update that
// leaves out the cluster IPs keeps them, so that a client need not read them first.
func prepareServiceUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldSvc, svc := oldObj.(*corev1.Service), newObj.(*corev1.Service)
	SetServiceDefaults(svc)
	svc.Status = *oldSvc.Status.DeepCopy()
	if needsClusterIP(oldSvc) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = oldSvc.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(oldSvc.Spec.ClusterIPs) > 0 && svc.Spec.ClusterIP == oldSvc.Spec.ClusterIP {
			svc.Spec.ClusterIPs = slices.Clone(oldSvc.Spec.ClusterIPs)
		}
	}
	if needsNodePort(oldSvc) && needsNodePort(svc) {
		// Ports that leave their node port out keep the one of the old port of the same name,
		// unless another port took it.
		used := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			used[p.NodePort] = true
		}
		old := map[string]int32{}
		for _, p := range oldSvc.Spec.Ports {
			old[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			if p := &svc.Spec.Ports[i]; p.NodePort == 0 && !used[old[p.Name]] {
				p.NodePort = old[p.Name]
			}
		}
		if needsHealthCheckNodePort(oldSvc) && needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
			svc.Spec.HealthCheckNodePort = oldSvc.Spec.HealthCheckNodePort
		}
	}
	// dropTypeDependentFields: node ports the new type does not use go, unless changed.
	if needsNodePort(oldSvc) && !needsNodePort(svc) && sameNodePorts(oldSvc, svc) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheckNodePort(oldSvc) && !needsHealthCheckNodePort(svc) && svc.Spec.HealthCheckNodePort == oldSvc.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && oldSvc.Spec.Type != corev1.ServiceTypeExternalName {
		// dropTypeDependentFields: the IP fields the old type had go with it, unless changed.
		if svc.Spec.ClusterIP == oldSvc.Spec.ClusterIP && slices.Equal(svc.Spec.ClusterIPs, oldSvc.Spec.ClusterIPs) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(svc.Spec.IPFamilies, oldSvc.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if ptr.Equal(svc.Spec.IPFamilyPolicy, oldSvc.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	normalizeClusterIPs(svc)
	return nil
}

// beginServiceCreate is the registry's allocateCreate: a cluster IP, then node ports.
func beginServiceCreate(st Store, obj runtime.Object, dryRun bool) error {
	svc := obj.(*corev1.Service)
	if err := allocateClusterIP(st, svc, dryRun); err != nil {
		return err
	}
	return allocateNodePorts(st, svc)
}

// beginServiceUpdate allocates what an update newly needs, as the registry's beginUpdate does: a
// cluster IP for a Service that did not need one (an ExternalName Service that changes type), and
// node ports for the ports that have none.
func beginServiceUpdate(st Store, oldObj, newObj runtime.Object, dryRun bool) error {
	svc := newObj.(*corev1.Service)
	if !needsClusterIP(oldObj.(*corev1.Service)) {
		if err := allocateClusterIP(st, svc, dryRun); err != nil {
			return err
		}
	}
	return allocateNodePorts(st, svc)
}

// needsNodePort reports whether the Service's ports get node ports: a NodePort Service's do, and
// a LoadBalancer Service's unless allocateLoadBalancerNodePorts is false.
func needsNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeLoadBalancer && ptr.Deref(svc.Spec.AllocateLoadBalancerNodePorts, true))
}

// needsHealthCheckNodePort reports whether the Service gets a health check node port: a
// LoadBalancer Service with the Local external traffic policy does.
func needsHealthCheckNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// sameNodePorts reports whether two Services' ports have the same node ports, in order.
func sameNodePorts(a, b *corev1.Service) bool {
	if len(a.Spec.Ports) != len(b.Spec.Ports) {
		return false
	}
	for i := range a.Spec.Ports {
		if a.Spec.Ports[i].NodePort != b.Spec.Ports[i].NodePort {
			return false
		}
	}
	return true
}

// nodePortBase and nodePortCount are kube-apiserver's default --service-node-port-range,
// 30000-32767.
const (
	nodePortBase  = 30000
	nodePortCount = 2768
)

// allocateNodePorts is the registry's initNodePorts and allocHealthCheckNodePort: each port of a
// Service that needs them gets the node port it asks for, if in range and not another Service's,
// or a free one, ports of the same number sharing one; a LoadBalancer Service with the Local
// policy gets a health check node port. Free ports are drawn as the port allocator draws them:
// from a random offset in the upper part of the range, then in the lower part kept for ports
// clients choose. The caller holds the store lock.
func allocateNodePorts(st Store, svc *corev1.Service) error {
	used := nodePortsInUse(st, svc)
	byPort := map[int32]int32{}
	invalid := func(path *field.Path, np int32, msg string) error {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name,
			field.ErrorList{field.Invalid(path, np, msg)})
	}
	take := func(np int32, path *field.Path) error {
		switch {
		case np < nodePortBase || np >= nodePortBase+nodePortCount:
			return invalid(path, np, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d",
				nodePortBase, nodePortBase+nodePortCount-1))
		case used[np]:
			return invalid(path, np, "provided port is already allocated")
		}
		used[np] = true
		return nil
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && !needsNodePort(svc) {
				continue
			}
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			if shared, ok := byPort[p.Port]; ok && (p.NodePort == 0 || p.NodePort == shared) {
				p.NodePort = shared
				continue
			}
			if p.NodePort == 0 {
				for _, q := range svc.Spec.Ports {
					if q.Port == p.Port && q.NodePort != 0 {
						p.NodePort = q.NodePort
						break
					}
				}
			}
			if p.NodePort != 0 {
				if err := take(p.NodePort, path); err != nil {
					return err
				}
			} else {
				np, ok := nextNodePort(st, used)
				if !ok {
					return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
				}
				p.NodePort = np
			}
			byPort[p.Port] = p.NodePort
		}
	}
	if needsHealthCheckNodePort(svc) {
		if np := svc.Spec.HealthCheckNodePort; np != 0 {
			if err := take(np, field.NewPath("spec", "healthCheckNodePort")); err != nil {
				return err
			}
		} else if np, ok := nextNodePort(st, used); ok {
			svc.Spec.HealthCheckNodePort = np
		} else {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a HealthCheck NodePort 0: range is full"))
		}
	}
	return nil
}

// nextNodePort picks a free node port and marks it used. It draws from st's random source; the
// caller holds the store lock.
func nextNodePort(st Store, used map[int32]bool) (int32, bool) {
	band := min(max(nodePortCount/32, 16), 128)
	scan := func(from, count int) (int32, bool) {
		start := st.Intn(count)
		for i := range count {
			if np := int32(nodePortBase + from + (start+i)%count); !used[np] {
				used[np] = true
				return np, true
			}
		}
		return 0, false
	}
	if np, ok := scan(band, nodePortCount-band); ok {
		return np, true
	}
	return scan(0, band)
}

// nodePortsInUse returns the node ports of every stored Service but svc. The caller holds the
// store lock.
func nodePortsInUse(st Store, svc *corev1.Service) map[int32]bool {
	used := map[int32]bool{}
	for other := range st.Services() {
		if other.Namespace == svc.Namespace && other.Name == svc.Name {
			continue
		}
		for _, p := range other.Spec.Ports {
			if p.NodePort != 0 {
				used[p.NodePort] = true
			}
		}
		if other.Spec.HealthCheckNodePort != 0 {
			used[other.Spec.HealthCheckNodePort] = true
		}
	}
	return used
}

// normalizeClusterIPs gives a Service that names only its clusterIP the clusterIPs that go with
// it, as for a client that predates the plural field.
func normalizeClusterIPs(svc *corev1.Service) {
	if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

// allocateClusterIP is the registry's initIPFamilyFields and allocClusterIPs on a single-stack
// IPv4 cluster: the family fields are completed, and a Service that needs a cluster IP gets the
// one it asks for, if free and in range, or a free one: the allocator tries the upper part of the
// range from a random address first and the lower part (kept for addresses clients choose) only
// when the upper part is full. A dry run is given the range's network address without taking
// anything, as from kube-apiserver. The caller holds the store lock.
func allocateClusterIP(st Store, svc *corev1.Service, dryRun bool) error {
	SetServiceDefaults(svc)
	if !needsClusterIP(svc) {
		return nil
	}
	normalizeClusterIPs(svc)
	invalid := func(errs ...*field.Error) error {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
	}
	spec := &svc.Spec
	headless := spec.ClusterIP == corev1.ClusterIPNone
	if spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		if headless && len(spec.Selector) == 0 {
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		spec.IPFamilyPolicy = &policy
	}
	if errs := validateClusterIPs(svc); len(errs) > 0 {
		return invalid(errs...)
	}
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if addr, ok := parseIP(ip); ok && addr.Is6() && i >= len(spec.IPFamilies) {
			return invalid(field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), spec.ClusterIPs, "IPv6 is not configured on this cluster"))
		}
	}
	if headless && len(spec.Selector) == 0 {
		// A headless Service without a selector takes both families unless it asks for one.
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		if len(spec.IPFamilies) < 2 && *spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			other := corev1.IPv6Protocol
			if spec.IPFamilies[0] == corev1.IPv6Protocol {
				other = corev1.IPv4Protocol
			}
			spec.IPFamilies = append(spec.IPFamilies, other)
		}
		return nil
	}
	var errs field.ErrorList
	if *spec.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), *spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, fam := range spec.IPFamilies {
		if fam != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), fam, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return invalid(errs...)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if headless {
		return nil
	}
	cidr := st.ServiceCIDR()
	used := clusterIPsInUse(st, svc)
	var ip netip.Addr
	if len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] != "" {
		requested, _ := parseIP(spec.ClusterIPs[0]) // valid: validateClusterIPs checked it
		first, last := ServiceRange(cidr)
		switch {
		case requested.Less(first) || last.Less(requested):
			return invalid(field.Invalid(field.NewPath("spec", "clusterIPs"), spec.ClusterIPs, fmt.Sprintf(
				"failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", requested, requested, cidr)))
		case used[requested] && !dryRun:
			return invalid(field.Invalid(field.NewPath("spec", "clusterIPs"), spec.ClusterIPs,
				fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", requested)))
		}
		ip = requested
	} else if dryRun {
		ip = cidr.Masked().Addr()
	} else {
		var ok bool
		if ip, ok = nextClusterIP(st, cidr, used); !ok {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
		}
	}
	spec.ClusterIP = ip.String()
	spec.ClusterIPs = []string{ip.String()}
	return nil
}

// parseIP parses an address as kube-apiserver's legacy fields do (IPv4 octets may have leading
// zeros), IPv4 addresses as such.
func parseIP(s string) (netip.Addr, bool) {
	ip := netutils.ParseIPSloppy(s)
	if ip == nil {
		return netip.Addr{}, false
	}
	a, ok := netip.AddrFromSlice(ip)
	return a.Unmap(), ok
}

// ServiceRange returns the first and last address of cidr, an IPv4 range, that a Service may
// have: not the network's address, nor its broadcast address.
func ServiceRange(cidr netip.Prefix) (first, last netip.Addr) {
	base := ipv4Uint(cidr.Masked().Addr())
	size := uint32(1) << (32 - cidr.Bits())
	return uint32IPv4(base + 1), uint32IPv4(base + size - 2)
}

func ipv4Uint(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

func uint32IPv4(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

// staticBandSize is the size of the lower part of a range that dynamic allocation leaves to
// clients that choose their address (KEP-3070): the range size over 16, at least 16 and at most
// 256, none for a range of 16 addresses or fewer.
func staticBandSize(cidr netip.Prefix) int {
	size := 1 << (cidr.Addr().BitLen() - cidr.Bits())
	if size <= 16 {
		return 0
	}
	return min(max(size/16, 16), 256)
}

// nextClusterIP picks a free address: from a random offset in the upper part of the range, then
// in the lower part. It draws from st's random source; the caller holds the store lock.
func nextClusterIP(st Store, cidr netip.Prefix, used map[netip.Addr]bool) (netip.Addr, bool) {
	first, last := ServiceRange(cidr)
	lo, n := ipv4Uint(first), int(ipv4Uint(last)-ipv4Uint(first))+1
	band := min(staticBandSize(cidr), n)
	scan := func(from, count int) (netip.Addr, bool) {
		if count <= 0 {
			return netip.Addr{}, false
		}
		start := st.Intn(count)
		for i := range count {
			if a := uint32IPv4(lo + uint32(from+(start+i)%count)); !used[a] {
				return a, true
			}
		}
		return netip.Addr{}, false
	}
	if a, ok := scan(band, n-band); ok {
		return a, true
	}
	return scan(0, band)
}

// clusterIPsInUse returns the cluster IPs of every stored Service but svc. The caller holds the
// store lock.
func clusterIPsInUse(st Store, svc *corev1.Service) map[netip.Addr]bool {
	used := map[netip.Addr]bool{}
	for other := range st.Services() {
		if other.Namespace == svc.Namespace && other.Name == svc.Name {
			continue
		}
		for _, ip := range other.Spec.ClusterIPs {
			if a, ok := parseIP(ip); ok {
				used[a] = true
			}
		}
	}
	return used
}

var (
	supportedProtocols       = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	supportedServiceTypes    = []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}
	supportedSessionAffinity = []string{"ClientIP", "None"}
	supportedTrafficPolicies = []string{"Cluster", "Local"}
)

// validateService is ValidateServiceCreate's checks of what a client writes: the name a DNS-1035
// label, the ports, the type and what goes with it, the selector, session affinity, the cluster
// IPs and the traffic policies.
func validateService(obj runtime.Object) field.ErrorList {
	svc := obj.(*corev1.Service)
	errs := serviceNameErrors(obj)
	spec, specPath := &svc.Spec, field.NewPath("spec")
	headless := len(spec.ClusterIPs) > 0 && spec.ClusterIPs[0] == corev1.ClusterIPNone
	if len(spec.Ports) == 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if headless {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0],
				fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname == "" {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(cname) {
				errs = append(errs, field.Invalid(specPath.Child("externalName"), cname, msg))
			}
		}
	}
	names := map[string]bool{}
	type portKey struct {
		protocol corev1.Protocol
		port     int32
	}
	seenPorts, seenNodePorts := map[portKey]bool{}, map[portKey]bool{}
	for i := range spec.Ports {
		p, path := &spec.Ports[i], specPath.Child("ports").Index(i)
		errs = append(errs, validateServicePort(p, len(spec.Ports) > 1, names, path)...)
		if spec.Type == corev1.ServiceTypeClusterIP && p.NodePort != 0 {
			errs = append(errs, field.Forbidden(path.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
		if p.NodePort != 0 {
			if k := (portKey{p.Protocol, p.NodePort}); seenNodePorts[k] {
				errs = append(errs, field.Duplicate(path.Child("nodePort"), p.NodePort))
			} else {
				seenNodePorts[k] = true
			}
		}
		if k := (portKey{p.Protocol, p.Port}); seenPorts[k] {
			errs = append(errs, field.Duplicate(path, corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}))
		} else {
			seenPorts[k] = true
		}
	}
	for k, v := range spec.Selector {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(specPath.Child("selector"), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(specPath.Child("selector"), v, msg))
		}
	}
	switch {
	case spec.SessionAffinity == "":
		errs = append(errs, field.Required(specPath.Child("sessionAffinity"), ""))
	case !slices.Contains(supportedSessionAffinity, string(spec.SessionAffinity)):
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, supportedSessionAffinity))
	case spec.SessionAffinity == corev1.ServiceAffinityNone && spec.SessionAffinityConfig != nil:
		errs = append(errs, field.Forbidden(specPath.Child("sessionAffinityConfig"), "must not be set when session affinity is None"))
	}
	errs = append(errs, validateClusterIPs(svc)...)
	switch {
	case spec.Type == "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	case !slices.Contains(supportedServiceTypes, string(spec.Type)):
		errs = append(errs, field.NotSupported(specPath.Child("type"), spec.Type, supportedServiceTypes))
	}
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.ExternalTrafficPolicy != "" && !slices.Contains(supportedTrafficPolicies, string(spec.ExternalTrafficPolicy)) {
		errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, supportedTrafficPolicies))
	}
	if spec.Type != corev1.ServiceTypeExternalName {
		switch {
		case spec.InternalTrafficPolicy == nil:
			errs = append(errs, field.Required(specPath.Child("internalTrafficPolicy"), ""))
		case !slices.Contains(supportedTrafficPolicies, string(*spec.InternalTrafficPolicy)):
			errs = append(errs, field.NotSupported(specPath.Child("internalTrafficPolicy"), *spec.InternalTrafficPolicy, supportedTrafficPolicies))
		}
	}
	return errs
}

// serviceNameErrors validates the metadata with the name as a DNS-1035 label
// (ValidateServiceName) instead of the subdomain other kinds' names are.
func serviceNameErrors(obj runtime.Object) field.ErrorList {
	m := MustMeta(obj)
	namePath := field.NewPath("metadata", "name")
	var errs field.ErrorList
	for _, err := range ValidateMeta(obj, true) {
		if err.Field == namePath.String() && err.Type == field.ErrorTypeInvalid {
			continue
		}
		errs = append(errs, err)
	}
	if m.GetName() != "" {
		for _, msg := range validation.IsDNS1035Label(m.GetName()) {
			errs = append(errs, field.Invalid(namePath, m.GetName(), msg))
		}
	}
	return errs
}

func validateServicePort(p *corev1.ServicePort, requireName bool, names map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case requireName && p.Name == "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case p.Name != "":
		for _, msg := range validation.IsDNS1123Label(p.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), p.Name, msg))
		}
		if names[p.Name] {
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		}
		names[p.Name] = true
	}
	for _, msg := range validation.IsValidPortNum(int(p.Port)) {
		errs = append(errs, field.Invalid(path.Child("port"), p.Port, msg))
	}
	errs = append(errs, validateProtocol(p.Protocol, path.Child("protocol"))...)
	errs = append(errs, validatePortNumOrName(p.TargetPort, path.Child("targetPort"))...)
	if p.AppProtocol != nil {
		for _, msg := range validation.IsQualifiedName(*p.AppProtocol) {
			errs = append(errs, field.Invalid(path.Child("appProtocol"), *p.AppProtocol, msg))
		}
	}
	return errs
}

func validateProtocol(protocol corev1.Protocol, path *field.Path) field.ErrorList {
	switch {
	case protocol == "":
		return field.ErrorList{field.Required(path, "")}
	case !slices.Contains(supportedProtocols, string(protocol)):
		return field.ErrorList{field.NotSupported(path, protocol, supportedProtocols)}
	}
	return nil
}

// validatePortNumOrName is ValidatePortNumOrName: a port number, or an IANA service name.
func validatePortNumOrName(port intstr.IntOrString, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(path, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(path, port.StrVal, msg))
		}
	}
	return errs
}

// validateClusterIPs is the part of ValidateServiceClusterIPsRelatedFields that applies to a
// single-stack cluster: clusterIPs starts with clusterIP, holds valid addresses, at most two, and
// "None" only alone.
func validateClusterIPs(svc *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	if len(spec.ClusterIPs) == 0 && spec.ClusterIP == "" {
		return nil
	}
	path := field.NewPath("spec", "clusterIPs")
	var errs field.ErrorList
	switch {
	case spec.ClusterIP != "" && len(spec.ClusterIPs) == 0:
		errs = append(errs, field.Required(path, ""))
	case spec.ClusterIP != "" && spec.ClusterIPs[0] != spec.ClusterIP:
		errs = append(errs, field.Invalid(path, spec.ClusterIPs, "first value must match `clusterIP`"))
	case spec.ClusterIP == "":
		errs = append(errs, field.Invalid(path, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(path, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			if i != 0 || len(spec.ClusterIPs) > 1 {
				errs = append(errs, field.Invalid(path, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs = append(errs, validation.IsValidIPForLegacyField(path.Index(i), ip, false, nil)...)
	}
	return errs
}

// validateServiceUpdate is the part of ValidateServiceUpdate that compares with the stored
// Service: its cluster IPs may not change, except to and from ExternalName.
func validateServiceUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldSvc, svc := oldObj.(*corev1.Service), newObj.(*corev1.Service)
	if oldSvc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("spec", "clusterIPs")
	for i, ip := range oldSvc.Spec.ClusterIPs {
		switch {
		case i >= len(svc.Spec.ClusterIPs):
			if i == 0 {
				errs = append(errs, field.Invalid(path.Index(0), svc.Spec.ClusterIPs, "primary clusterIP can not be unset"))
			}
		case svc.Spec.ClusterIPs[i] != ip:
			errs = append(errs, field.Invalid(path.Index(i), svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

var serviceColumns = []metav1.TableColumnDefinition{
	Col("Name", "string", "name", 0),
	Col("Type", "string", "", 0),
	Col("Cluster-IP", "string", "", 0),
	Col("External-IP", "string", "", 0),
	Col("Port(s)", "string", "", 0),
	Col("Age", "string", "", 0),
	Col("Selector", "string", "", 1),
}

func serviceCells(now time.Time, obj runtime.Object) []any {
	svc := obj.(*corev1.Service)
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	portText := strings.Join(ports, ",")
	if portText == "" {
		portText = "<none>"
	}
	return []any{svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), portText,
		Age(now, svc.CreationTimestamp), labels.FormatLabels(svc.Spec.Selector)}
}

// serviceExternalIP is the printer's EXTERNAL-IP: the external IPs, a load balancer's ingress
// addresses (<pending> while it has none), or an ExternalName's name.
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		var ips []string
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			switch {
			case ing.IP != "":
				ips = append(ips, ing.IP)
			case ing.Hostname != "":
				ips = append(ips, ing.Hostname)
			}
		}
		ips = append(ips, svc.Spec.ExternalIPs...)
		if len(ips) == 0 {
			return "<pending>"
		}
		return strings.Join(ips, ",")
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}
