package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ResourceSlices (resource.k8s.io/v1) are what DRA drivers publish about their devices: one pool
// per node (or per cluster), in slices. The kubelet wipes a node's slices of a driver when the
// driver goes away, with a DELETE of the collection selected by spec.nodeName and spec.driver.
// They are stored as kube-apiserver's resourceslice registry stores them: cluster-scoped,
// generation 1 at create and one more at each change of the spec, validated as
// ValidateResourceSlice does the fields a driver writes, and selectable by those two fields.

// kube-apiserver's limits on a ResourceSlice (pkg/apis/resource/types.go).
const (
	driverNameMaxLength       = 63
	resourceSliceMaxDevices   = 128
	deviceMaxIDLength         = 32
	deviceAttributeMaxValue   = 64
	deviceMaxAttrsAndCapacity = 32
)

// ResourceSlices is the resource slice strategy (resource.k8s.io/v1).
func ResourceSlices() Strategy {
	return Strategy{
		NewObj:   func() runtime.Object { return &resourcev1.ResourceSlice{} },
		FieldSet: resourceSliceFields,
		PrepareCreate: func(obj runtime.Object) {
			obj.(*resourcev1.ResourceSlice).Generation = 1
		},
		Validate: validateResourceSlice,
		PrepareUpdate: func(oldObj, newObj runtime.Object) field.ErrorList {
			o, n := oldObj.(*resourcev1.ResourceSlice), newObj.(*resourcev1.ResourceSlice)
			if !apiequality.Semantic.DeepEqual(o.Spec, n.Spec) {
				n.Generation = o.Generation + 1
			}
			return nil
		},
		ValidateUpdate: validateResourceSliceUpdate,
		Columns:        resourceSliceColumns,
		Cells:          resourceSliceCells,
	}
}

// resourceSliceFields are the field labels kube-apiserver's conversion accepts for a
// ResourceSlice: its name, spec.nodeName ("" for a slice without one) and spec.driver.
func resourceSliceFields(obj runtime.Object) fields.Set {
	s := obj.(*resourcev1.ResourceSlice)
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return fields.Set{"metadata.name": s.Name, resourcev1.ResourceSliceSelectorNodeName: node, resourcev1.ResourceSliceSelectorDriver: s.Spec.Driver}
}

// validateResourceSlice is ValidateResourceSlice for the fields a driver's ResourceSlice
// controller writes: the name, the driver, the pool, the one node choice, and the devices' names,
// attributes and capacities. Taints, counters and binding conditions are not checked.
func validateResourceSlice(obj runtime.Object) field.ErrorList {
	s := obj.(*resourcev1.ResourceSlice)
	return append(ValidateMeta(obj, false), validateResourceSliceSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateResourceSliceUpdate is the update's part: the pool's name, the driver and the node
// name are immutable.
func validateResourceSliceUpdate(oldObj, newObj runtime.Object) field.ErrorList {
	o, n := oldObj.(*resourcev1.ResourceSlice), newObj.(*resourcev1.ResourceSlice)
	p := field.NewPath("spec")
	var errs field.ErrorList
	immutable := func(changed bool, path *field.Path, value any) {
		if changed {
			errs = append(errs, field.Invalid(path, value, "field is immutable"))
		}
	}
	immutable(n.Spec.Pool.Name != o.Spec.Pool.Name, p.Child("pool", "name"), n.Spec.Pool.Name)
	immutable(n.Spec.Driver != o.Spec.Driver, p.Child("driver"), n.Spec.Driver)
	immutable(!apiequality.Semantic.DeepEqual(n.Spec.NodeName, o.Spec.NodeName), p.Child("nodeName"), n.Spec.NodeName)
	return errs
}

func validateResourceSliceSpec(spec *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	errs := validateDriverName(spec.Driver, p.Child("driver"))
	errs = append(errs, validatePool(spec.Pool, p.Child("pool"))...)

	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			for _, msg := range validation.IsDNS1123Subdomain(*spec.NodeName) {
				errs = append(errs, field.Invalid(p.Child("nodeName"), *spec.NodeName, msg))
			}
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *spec.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), spec.NodeSelector.NodeSelectorTerms, "must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		name string
		v    *bool
	}{{"allNodes", spec.AllNodes}, {"perDeviceNodeSelection", spec.PerDeviceNodeSelection}} {
		if b.v == nil {
			continue
		}
		if *b.v {
			set = append(set, "`"+b.name+"`")
		} else {
			errs = append(errs, field.Invalid(p.Child(b.name), *b.v, "must be either unset or set to true"))
		}
	}
	const oneOf = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, oneOf))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmt.Sprintf("{%s}", strings.Join(set, ", ")), oneOf+", but multiple fields are set"))
	}
	if spec.SharedCounters != nil && spec.Devices != nil {
		errs = append(errs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}

	devices := p.Child("devices")
	if len(spec.Devices) > resourceSliceMaxDevices {
		// The size check short-circuits the devices' own checks, as the registry's does.
		return append(errs, field.TooMany(devices, len(spec.Devices), resourceSliceMaxDevices))
	}
	for i, d := range spec.Devices {
		errs = append(errs, validateDevice(d, devices.Index(i))...)
	}
	// Duplicates after every device's own errors, as the registry's validateSet reports them.
	seen := map[string]bool{}
	for i, d := range spec.Devices {
		if seen[d.Name] {
			errs = append(errs, field.Duplicate(devices.Index(i), d.Name))
		}
		seen[d.Name] = true
	}
	return errs
}

// validateDriverName is ValidateCSIDriverName, which DRA's driver names share: at most 63
// characters, a DNS subdomain in any case.
func validateDriverName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > driverNameMaxLength {
		errs = append(errs, field.TooLong(p, "", driverNameMaxLength))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validatePool checks the pool's name (DNS subdomains separated by slashes, at most 253
// characters), its slice count (positive) and its generation (not negative).
func validatePool(pool resourcev1.ResourcePool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	name := p.Child("name")
	if pool.Name == "" {
		errs = append(errs, field.Required(name, ""))
	} else {
		if len(pool.Name) > validation.DNS1123SubdomainMaxLength {
			errs = append(errs, field.TooLong(name, "", validation.DNS1123SubdomainMaxLength))
		}
		for _, part := range strings.Split(pool.Name, "/") {
			for _, msg := range validation.IsDNS1123Subdomain(part) {
				errs = append(errs, field.Invalid(name, part, msg))
			}
		}
	}
	if pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(p.Child("resourceSliceCount"), pool.ResourceSliceCount, "must be greater than zero"))
	}
	if pool.Generation < 0 {
		errs = append(errs, field.Invalid(p.Child("generation"), pool.Generation, "must be greater than or equal to zero"))
	}
	return errs
}

// validateDevice checks a device's name (a DNS label), how many attributes and capacities it has,
// their names (a C identifier, optionally behind a driver-name-like domain) and that each
// attribute has exactly one value.
func validateDevice(d resourcev1.Device, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(d.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), d.Name, msg))
	}
	if n := len(d.Attributes) + len(d.Capacity); n > deviceMaxAttrsAndCapacity {
		errs = append(errs, field.Invalid(p, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", deviceMaxAttrsAndCapacity)))
	}
	// Map keys in order, so that the errors come out in one order (the registry's map order is
	// random).
	for _, k := range slices.Sorted(maps.Keys(d.Attributes)) {
		kp := p.Child("attributes").Key(string(k))
		errs = append(errs, validateQualifiedName(string(k), kp)...)
		a := d.Attributes[k]
		values := 0
		for _, set := range []bool{a.BoolValue != nil, a.IntValue != nil, a.StringValue != nil, a.VersionValue != nil} {
			if set {
				values++
			}
		}
		if values != 1 {
			errs = append(errs, field.Invalid(kp, "", "exactly one value must be specified"))
		}
		if a.StringValue != nil && len(*a.StringValue) > deviceAttributeMaxValue {
			errs = append(errs, field.TooLong(kp.Child("string"), "", deviceAttributeMaxValue))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d.Capacity)) {
		errs = append(errs, validateQualifiedName(string(k), p.Child("capacity").Key(string(k)))...)
	}
	return errs
}

// validateQualifiedName checks an attribute or capacity name: a C identifier of at most 32
// characters, or a driver name, a slash and one.
func validateQualifiedName(name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	id := name
	if domain, rest, ok := strings.Cut(name, "/"); ok {
		id = rest
		if domain == "" {
			errs = append(errs, field.Invalid(p, "", "the domain must not be empty"))
		} else {
			errs = append(errs, validateDriverName(domain, p)...)
		}
		if id == "" {
			return append(errs, field.Invalid(p, "", "the name must not be empty"))
		}
	}
	if len(id) > deviceMaxIDLength {
		errs = append(errs, field.TooLong(p, "", deviceMaxIDLength))
	}
	for _, msg := range validation.IsCIdentifier(id) {
		errs = append(errs, field.Invalid(p, id, msg))
	}
	return errs
}

var resourceSliceColumns = []metav1.TableColumnDefinition{
	Col("Name", "string", "name", 0),
	Col("Node", "string", "", 0),
	Col("Driver", "string", "", 0),
	Col("Pool", "string", "", 0),
	Col("Age", "string", "", 0),
}

func resourceSliceCells(now time.Time, obj runtime.Object) []any {
	s := obj.(*resourcev1.ResourceSlice)
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return []any{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, Age(now, s.CreationTimestamp)}
}
