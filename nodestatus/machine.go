package nodestatus

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Machine is what the node's capacity and allocatable are made of: the machine's size (the
// kubelet reads it from cAdvisor; here it is configured) and the KubeletConfiguration fields that
// hold part of it back. The zero value is a 4-CPU, 8Gi, 100Gi node with the kubelet's defaults.
type Machine struct {
	// Capacity sets cpu, memory and ephemeral-storage; one left out keeps DefaultCapacity's.
	Capacity v1.ResourceList
	// MaxPods is the pods capacity (maxPods); zero is DefaultMaxPods.
	MaxPods int32
	// KubeReserved and SystemReserved are held back from allocatable (kubeReserved,
	// systemReserved): cpu, memory, ephemeral-storage, pid.
	KubeReserved, SystemReserved v1.ResourceList
	// EvictionHard are the hard eviction thresholds, signal to "<quantity>" or "<percent>%";
	// memory.available and nodefs.available are held back from memory and ephemeral-storage.
	// Nil is the kubelet's defaults (DefaultEvictionHard); a map replaces them unless
	// MergeDefaultEvictionSettings, which fills in the signals it leaves out.
	EvictionHard                 map[string]string
	MergeDefaultEvictionSettings bool
}

// DefaultCapacity is the simulated machine's size when nothing else is configured.
var DefaultCapacity = v1.ResourceList{
	v1.ResourceCPU:              resource.MustParse("4"),
	v1.ResourceMemory:           resource.MustParse("8Gi"),
	v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
}

// DefaultEvictionHard is the kubelet's default evictionHard on Linux.
var DefaultEvictionHard = map[string]string{
	"memory.available":   "100Mi",
	"nodefs.available":   "10%",
	"nodefs.inodesFree":  "5%",
	"imagefs.available":  "15%",
	"imagefs.inodesFree": "5%",
}

// evictionSignals are the hard eviction signals the kubelet accepts on Linux.
var evictionSignals = []string{
	"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree",
	"containerfs.available", "containerfs.inodesFree", "allocatableMemory.available", "pid.available",
}

// reservable are the resources kubeReserved and systemReserved may name.
var reservable = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "pid"}

// Validate checks the settings as the kubelet does at start-up: known resources and eviction
// signals, thresholds that parse, and no reservation larger than the capacity.
func (m Machine) Validate() error {
	var errs []error
	for _, name := range sortedNames(m.Capacity) {
		q := m.Capacity[name]
		if name != v1.ResourceCPU && name != v1.ResourceMemory && name != v1.ResourceEphemeralStorage {
			errs = append(errs, fmt.Errorf("capacity %s: only cpu, memory and ephemeral-storage can be set (pods is maxPods)", name))
		} else if q.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("capacity %s %s: must be positive", name, q.String()))
		}
	}
	for _, r := range []struct {
		field string
		rl    v1.ResourceList
	}{{"kubeReserved", m.KubeReserved}, {"systemReserved", m.SystemReserved}} {
		field, rl := r.field, r.rl
		for _, name := range sortedNames(rl) {
			q := rl[name]
			if !slices.Contains(reservable, name) {
				errs = append(errs, fmt.Errorf("%s %s: only cpu, memory, ephemeral-storage and pid can be reserved", field, name))
			} else if q.Sign() < 0 {
				errs = append(errs, fmt.Errorf("%s %s %s: must not be negative", field, name, q.String()))
			}
		}
	}
	if _, err := m.evictionReservation(m.capacity()); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	capacity := m.capacity()
	reserved, _ := m.reservation(capacity)
	for _, name := range sortedNames(reserved) {
		c, r := capacity[name], reserved[name]
		if c.Cmp(r) < 0 {
			errs = append(errs, fmt.Errorf("resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation", name, r.String(), c.String()))
		}
	}
	return errors.Join(errs...)
}

// Resources returns the node's capacity and allocatable, as the kubelet's MachineInfo setter
// writes them: allocatable is capacity less kubeReserved, systemReserved and the hard eviction
// reservation, never below zero. The Machine must be valid.
func (m Machine) Resources() (capacity, allocatable v1.ResourceList) {
	capacity = m.capacity()
	reserved, _ := m.reservation(capacity)
	allocatable = v1.ResourceList{}
	for name, q := range capacity {
		v := q.DeepCopy()
		if r, ok := reserved[name]; ok {
			v.Sub(r)
		}
		if v.Sign() < 0 {
			v.Set(0)
		}
		allocatable[name] = v
	}
	return capacity, allocatable
}

func (m Machine) capacity() v1.ResourceList {
	c := DefaultCapacity.DeepCopy()
	for name, q := range m.Capacity {
		c[name] = q.DeepCopy()
	}
	pods := m.MaxPods
	if pods == 0 {
		pods = DefaultMaxPods
	}
	c[v1.ResourcePods] = *resource.NewQuantity(int64(pods), resource.DecimalSI)
	return c
}

// AllocatableAbsolute is the container manager's GetNodeAllocatableAbsolute: the capacity less
// the system and kube reservations, without the eviction thresholds, none below zero. The
// allocation manager holds a resize against it.
func (m Machine) AllocatableAbsolute() v1.ResourceList {
	out := v1.ResourceList{}
	for name, q := range m.capacity() {
		v := q.DeepCopy()
		for _, rl := range []v1.ResourceList{m.SystemReserved, m.KubeReserved} {
			if r, ok := rl[name]; ok {
				v.Sub(r)
			}
		}
		if v.Sign() < 0 {
			v.Set(0)
		}
		out[name] = v
	}
	return out
}

// reservation is GetNodeAllocatableReservation: per resource in capacity, the sum of the system
// and kube reservations and the hard eviction reservation.
func (m Machine) reservation(capacity v1.ResourceList) (v1.ResourceList, error) {
	eviction, err := m.evictionReservation(capacity)
	if err != nil {
		return nil, err
	}
	out := v1.ResourceList{}
	for name := range capacity {
		v := resource.NewQuantity(0, resource.DecimalSI)
		for _, rl := range []v1.ResourceList{m.SystemReserved, m.KubeReserved, eviction} {
			if q, ok := rl[name]; ok {
				v.Add(q)
			}
		}
		if !v.IsZero() {
			out[name] = *v
		}
	}
	return out, nil
}

// evictionThresholds is evictionHard after the kubelet's defaulting.
func (m Machine) evictionThresholds() map[string]string {
	if m.EvictionHard == nil {
		return DefaultEvictionHard
	}
	out := map[string]string{}
	if m.MergeDefaultEvictionSettings {
		for k, v := range DefaultEvictionHard {
			out[k] = v
		}
	}
	for k, v := range m.EvictionHard {
		out[k] = v
	}
	return out
}

// evictionReservation is hardEvictionReservation: memory.available reserves memory and
// nodefs.available ephemeral-storage, a quantity as given and a percentage of the capacity. The
// percentage is a float32, as the kubelet parses it, so 10% of 100Gi is 10737418400 bytes, not
// 10737418240.
func (m Machine) evictionReservation(capacity v1.ResourceList) (v1.ResourceList, error) {
	out := v1.ResourceList{}
	var errs []error
	thresholds := m.evictionThresholds()
	for _, signal := range sortedKeys(thresholds) {
		val := thresholds[signal]
		if !slices.Contains(evictionSignals, signal) {
			errs = append(errs, fmt.Errorf("evictionHard: unsupported eviction signal %v", signal))
			continue
		}
		q, ok, err := thresholdQuantity(signal, val, capacity)
		if err != nil {
			errs = append(errs, fmt.Errorf("evictionHard %s=%q: %w", signal, val, err))
			continue
		}
		if !ok {
			continue
		}
		switch signal {
		case "memory.available":
			out[v1.ResourceMemory] = q
		case "nodefs.available":
			out[v1.ResourceEphemeralStorage] = q
		}
	}
	return out, errors.Join(errs...)
}

// thresholdQuantity parses one threshold as parseThresholdStatement does (0% and 100% are
// ignored) and resolves it against the capacity the signal reserves from.
func thresholdQuantity(signal, val string, capacity v1.ResourceList) (resource.Quantity, bool, error) {
	if strings.HasSuffix(val, "%") {
		if val == "0%" || val == "100%" {
			return resource.Quantity{}, false, nil
		}
		f, err := strconv.ParseFloat(strings.TrimRight(val, "%"), 32)
		if err != nil {
			return resource.Quantity{}, false, fmt.Errorf("parse percentage: %w", err)
		}
		pct := float32(f) / 100
		if pct < 0 || pct > 1 {
			return resource.Quantity{}, false, fmt.Errorf("eviction percentage threshold %v must be between 0%% and 100%%", signal)
		}
		base := capacity[v1.ResourceMemory]
		if signal == "nodefs.available" {
			base = capacity[v1.ResourceEphemeralStorage]
		}
		return *resource.NewQuantity(int64(float64(base.Value())*float64(pct)), resource.BinarySI), true, nil
	}
	q, err := resource.ParseQuantity(val)
	if err != nil {
		return resource.Quantity{}, false, fmt.Errorf("parse quantity: %w", err)
	}
	if q.Sign() <= 0 {
		return resource.Quantity{}, false, fmt.Errorf("eviction threshold %v must be positive: %s", signal, q.String())
	}
	return q, true, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sortedNames(rl v1.ResourceList) []v1.ResourceName {
	out := make([]v1.ResourceName, 0, len(rl))
	for k := range rl {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// applyResources is the cpu, memory, ephemeral-storage and pods part of the kubelet's MachineInfo
// setter: capacity and allocatable as configured (Machine.Resources), each quantity a copy of its
// own, as the setter makes them afresh at every update. Device plugin resources are applied after
// it.
func applyResources(node *v1.Node, capacity, allocatable v1.ResourceList) {
	if node.Status.Capacity == nil {
		node.Status.Capacity = v1.ResourceList{}
	}
	if node.Status.Allocatable == nil {
		node.Status.Allocatable = v1.ResourceList{}
	}
	for name, q := range capacity {
		node.Status.Capacity[name] = q.DeepCopy()
	}
	for name, q := range allocatable {
		node.Status.Allocatable[name] = q.DeepCopy()
	}
}
