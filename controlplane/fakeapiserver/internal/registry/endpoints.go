//lint:file-ignore SA1019 core/v1 Endpoints are deprecated since v1.33, and served because kube-apiserver v1.35 still serves them

package registry

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
	"k8s.io/utils/ptr"
)

// Endpoints (core/v1, deprecated since v1.33: every request on them gets kube-apiserver's
// deprecation warning) and EndpointSlices (discovery.k8s.io/v1) are stored and validated as
// kube-apiserver stores them. No endpoints or endpoint slice controller fills them from Services
// and pods: they hold what clients write.

// Endpoints is the endpoints strategy (core/v1).
func Endpoints() Strategy {
	return Strategy{
		NewObj:        func() runtime.Object { return &corev1.Endpoints{} },
		FieldSet:      MetaFields,
		PrepareCreate: defaultEndpoints,
		Validate:      validateEndpoints,
		PrepareUpdate: func(_, newObj runtime.Object) field.ErrorList { defaultEndpoints(newObj); return nil },
		Columns:       endpointsColumns,
		Cells:         endpointsCells,
	}
}

// EndpointSlices is the endpoint slice strategy (discovery.k8s.io/v1).
func EndpointSlices() Strategy {
	return Strategy{
		NewObj:         func() runtime.Object { return &discoveryv1.EndpointSlice{} },
		FieldSet:       MetaFields,
		PrepareCreate:  defaultEndpointSlice,
		Validate:       validateEndpointSlice,
		PrepareUpdate:  func(_, newObj runtime.Object) field.ErrorList { defaultEndpointSlice(newObj); return nil },
		ValidateUpdate: validateEndpointSliceUpdate,
		Columns:        endpointSliceColumns,
		Cells:          endpointSliceCells,
	}
}

// defaultEndpoints is SetDefaults_Endpoints: a port's protocol is TCP.
func defaultEndpoints(obj runtime.Object) {
	ep := obj.(*corev1.Endpoints)
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if p := &ep.Subsets[i].Ports[j]; p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// defaultEndpointSlice is SetDefaults_EndpointPort: a port's name is "" and its protocol TCP.
func defaultEndpointSlice(obj runtime.Object) {
	slice := obj.(*discoveryv1.EndpointSlice)
	for i := range slice.Ports {
		p := &slice.Ports[i]
		if p.Name == nil {
			p.Name = ptr.To("")
		}
		if p.Protocol == nil {
			p.Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

// validateEndpoints is ValidateEndpointsCreate: each subset has addresses, each address is a
// routable IP, each port a named (when there are several) valid port.
func validateEndpoints(obj runtime.Object) field.ErrorList {
	ep := obj.(*corev1.Endpoints)
	errs := ValidateMeta(obj, true)
	for i := range ep.Subsets {
		ss, path := &ep.Subsets[i], field.NewPath("subsets").Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(path, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], path.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], path.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			p, ppath := &ss.Ports[j], path.Child("ports").Index(j)
			switch {
			case len(ss.Ports) > 1 && p.Name == "":
				errs = append(errs, field.Required(ppath.Child("name"), ""))
			case p.Name != "":
				for _, msg := range validation.IsDNS1123Label(p.Name) {
					errs = append(errs, field.Invalid(ppath.Child("name"), p.Name, msg))
				}
			}
			for _, msg := range validation.IsValidPortNum(int(p.Port)) {
				errs = append(errs, field.Invalid(ppath.Child("port"), p.Port, msg))
			}
			errs = append(errs, validateProtocol(p.Protocol, ppath.Child("protocol"))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *corev1.EndpointAddress, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if a.Hostname != "" {
		for _, msg := range validation.IsDNS1123Label(a.Hostname) {
			errs = append(errs, field.Invalid(path.Child("hostname"), a.Hostname, msg))
		}
	}
	if a.NodeName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*a.NodeName) {
			errs = append(errs, field.Invalid(path.Child("nodeName"), *a.NodeName, msg))
		}
	}
	if ipErrs := validation.IsValidIPForLegacyField(path.Child("ip"), a.IP, false, nil); len(ipErrs) > 0 {
		return append(errs, ipErrs...)
	}
	return append(errs, validateEndpointIP(a.IP, path.Child("ip"))...)
}

// validateEndpointIP is ValidateEndpointIP: an address a client can be sent to.
func validateEndpointIP(s string, path *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(s)
	if ip == nil {
		return field.ErrorList{field.Invalid(path, s, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(path, s, fmt.Sprintf("may not be unspecified (%v)", s)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(path, s, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(path, s, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(path, s, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// Bounds of an EndpointSlice, from kube-apiserver's discovery validation.
const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 20000
)

var supportedAddressTypes = []string{string(discoveryv1.AddressTypeFQDN), string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6)}

// validateEndpointSlice is ValidateEndpointSliceCreate: the address type, the ports, and the
// endpoints' addresses in that type.
func validateEndpointSlice(obj runtime.Object) field.ErrorList {
	slice := obj.(*discoveryv1.EndpointSlice)
	errs := ValidateMeta(obj, true)
	switch {
	case slice.AddressType == "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	case !slices.Contains(supportedAddressTypes, string(slice.AddressType)):
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), slice.AddressType, supportedAddressTypes))
	}
	portsPath := field.NewPath("ports")
	if len(slice.Ports) > maxSlicePorts {
		errs = append(errs, field.TooMany(portsPath, len(slice.Ports), maxSlicePorts))
	}
	names := map[string]bool{}
	for i, p := range slice.Ports {
		path := portsPath.Index(i)
		name := ptr.Deref(p.Name, "")
		if name != "" {
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, field.Invalid(path.Child("name"), name, msg))
			}
		}
		if names[name] {
			errs = append(errs, field.Duplicate(path.Child("name"), name))
		}
		names[name] = true
		if p.Protocol == nil {
			errs = append(errs, field.Required(path.Child("protocol"), ""))
		} else {
			errs = append(errs, validateProtocol(*p.Protocol, path.Child("protocol"))...)
		}
		if p.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
				errs = append(errs, field.Invalid(path.Child("port"), *p.Port, msg))
			}
		}
	}
	endpointsPath := field.NewPath("endpoints")
	if len(slice.Endpoints) > maxSliceEndpoints {
		return append(errs, field.TooMany(endpointsPath, len(slice.Endpoints), maxSliceEndpoints))
	}
	for i, e := range slice.Endpoints {
		path := endpointsPath.Index(i).Child("addresses")
		switch {
		case len(e.Addresses) == 0:
			errs = append(errs, field.Required(path, "must contain at least 1 address"))
		case len(e.Addresses) > maxSliceAddresses:
			errs = append(errs, field.TooMany(path, len(e.Addresses), maxSliceAddresses))
		}
		for j, addr := range e.Addresses {
			switch slice.AddressType {
			case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
				var ipErrs field.ErrorList
				if slice.AddressType == discoveryv1.AddressTypeIPv4 {
					ipErrs = validation.IsValidIPForLegacyField(path.Index(j), addr, false, nil)
				} else {
					ipErrs = validation.IsValidIP(path.Index(j), addr)
				}
				if len(ipErrs) > 0 {
					errs = append(errs, ipErrs...)
					continue
				}
				ip, _ := parseIP(addr)
				if want4 := slice.AddressType == discoveryv1.AddressTypeIPv4; want4 != ip.Is4() {
					errs = append(errs, field.Invalid(path, addr, "must be an "+string(slice.AddressType)+" address"))
				}
				errs = append(errs, validateEndpointIP(addr, path.Index(j))...)
			case discoveryv1.AddressTypeFQDN:
				for _, msg := range validation.IsDNS1123Subdomain(strings.TrimSuffix(addr, ".")) {
					errs = append(errs, field.Invalid(path.Index(j), addr, msg))
				}
			}
		}
	}
	return errs
}

func validateEndpointSliceUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	oldSlice, slice := oldObj.(*discoveryv1.EndpointSlice), newObj.(*discoveryv1.EndpointSlice)
	if slice.AddressType != oldSlice.AddressType {
		return field.ErrorList{field.Invalid(field.NewPath("addressType"), slice.AddressType, "field is immutable")}
	}
	return nil
}

var endpointsColumns = []metav1.TableColumnDefinition{
	Col("Name", "string", "name", 0),
	Col("Endpoints", "string", "", 0),
	Col("Age", "string", "", 0),
}

// endpointsCells formats ENDPOINTS as the printer does: up to three ip:port (or ip for a subset
// without ports), then "+ N more...", "<none>" for no subsets.
func endpointsCells(now time.Time, obj runtime.Object) []any {
	ep := obj.(*corev1.Endpoints)
	const most = 3
	var list []string
	count := 0
	add := func(s string) {
		if len(list) < most {
			list = append(list, s)
		}
		count++
	}
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	text := strings.Join(list, ",")
	switch {
	case len(ep.Subsets) == 0:
		text = "<none>"
	case count > most:
		text = fmt.Sprintf("%s + %d more...", text, count-most)
	}
	return []any{ep.Name, text, Age(now, ep.CreationTimestamp)}
}

var endpointSliceColumns = []metav1.TableColumnDefinition{
	Col("Name", "string", "name", 0),
	Col("AddressType", "string", "", 0),
	Col("Ports", "string", "", 0),
	Col("Endpoints", "string", "", 0),
	Col("Age", "string", "", 0),
}

func endpointSliceCells(now time.Time, obj runtime.Object) []any {
	slice := obj.(*discoveryv1.EndpointSlice)
	var ports, addrs []string
	for _, p := range slice.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	for _, e := range slice.Endpoints {
		addrs = append(addrs, e.Addresses...)
	}
	return []any{slice.Name, string(slice.AddressType), firstThree(ports), firstThree(addrs), Age(now, slice.CreationTimestamp)}
}

// firstThree is the printer's listWithMoreString: up to three items, then "+ N more...",
// "<unset>" for none.
func firstThree(items []string) string {
	switch {
	case len(items) == 0:
		return "<unset>"
	case len(items) > 3:
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:3], ","), len(items)-3)
	}
	return strings.Join(items, ",")
}
