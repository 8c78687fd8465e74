package podintern

import (
	"bytes"
	"hash/maphash"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// internGeneration is how many distinct values a table's generation holds before it starts
// a new one. The values interned are the ones pods of one template, or of one node, repeat (a
// few hundred for a fleet's Deployments); a value not seen for a whole generation is dropped,
// so names that only one pod carries cannot make the table grow without bound.
const internGeneration = 4096

// internRawGeneration is internGeneration for managed fields' encodings, which are larger and of
// which fewer repeat: the controller manager's entry is the same for every pod of a template,
// the kubelet's status entry (which names the pod's IP) is each version's own. A short
// generation drops those soon, so that the table keeps little that no pod holds any more.
const internRawGeneration = 256

// internMaxString and internMaxRaw are the largest string and managed fields encoding a table
// keeps. The generations bound how many values it holds, not their size: without a cap, an
// annotation of a megabyte (a last-applied-configuration, a config blob) held by one pod would
// stay in the table for a whole generation after the pod is gone. With them a table holds at most
// 2*internGeneration*internMaxString + 2*internRawGeneration*internMaxRaw bytes (8 MiB + 4 MiB).
// What pods of a template repeat is well under either: label values are at most 63 bytes, image
// references a few hundred, and the controller manager's managed fields entry of a template a
// KiB or two. A value above the cap is not kept by the table: it is handed back as it came, or
// fitted to its length when its array has room to spare.
const (
	internMaxString = 1 << 10
	internMaxRaw    = 8 << 10
)

// Table makes decoded pods share one copy of each string, and of each managed fields entry's
// encoding, that many of them repeat: the labels a template gives every pod of its ReplicaSet,
// the owner reference, the image, the managers' names and field sets, the tolerations, the
// condition types. A JSON (or protobuf) decode makes each of them anew for every pod and every
// version of it, and a node keeps two versions of each pod (the api source's and PodConfig's
// copy, docs/design/008-shared-pods.md), whose deep copies share strings but not the managed
// fields' bytes.
//
// It rewrites the pod it is given, which must still be its decoder's alone: the api source's
// runners intern a pod before handing it to the core, past which it is read-only. A shared
// string is never written (Go strings are immutable); a shared FieldsV1.Raw is one more thing
// that nobody past the source may change, as the rest of the pod. Values and behaviour are the
// same: only where the bytes live changes.
//
// It belongs to one goroutine at a time and has no lock. Two generations bound it: a
// value is looked up in the current one, then in the previous one (and moved to the current),
// and when the current one is full it becomes the previous one.
type Table struct {
	cur, prev       map[string]string
	curRaw, prevRaw map[uint64][]byte // by maphash.Bytes(seed, raw)
	seed            maphash.Seed
	// eventFields is the managed fields the last stored event was given, which the next one
	// shares when its own are equal to them (StoredEvent).
	eventFields []metav1.ManagedFieldsEntry
}

// New returns an empty table.
func New() *Table {
	return &Table{cur: map[string]string{}, curRaw: map[uint64][]byte{}, seed: maphash.MakeSeed()}
}

func (in *Table) str(s string) string {
	if s == "" || len(s) > internMaxString {
		return s
	}
	if v, ok := in.cur[s]; ok {
		return v
	}
	if v, ok := in.prev[s]; ok {
		s = v
	}
	if len(in.cur) >= internGeneration {
		in.prev, in.cur = in.cur, make(map[string]string, internGeneration)
	}
	in.cur[s] = s
	return s
}

// raw returns the table's copy of b, or b, fitted (fit), when the table has none: b is kept
// then, and shared by the values equal to it that come after.
func (in *Table) raw(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	if len(b) > internMaxRaw {
		return fit(b)
	}
	// Keyed by a hash, not by string(b), which would keep a second copy of the bytes.
	h := maphash.Bytes(in.seed, b)
	if v, ok := in.curRaw[h]; ok {
		if bytes.Equal(v, b) {
			return v
		}
		return fit(b) // a collision: b stays its own
	}
	if v, ok := in.prevRaw[h]; ok && bytes.Equal(v, b) {
		b = v
	} else {
		b = fit(b)
	}
	if len(in.curRaw) >= internRawGeneration {
		in.prevRaw, in.curRaw = in.curRaw, make(map[uint64][]byte, internRawGeneration)
	}
	in.curRaw[h] = b
	return b
}

// fit returns b, or a copy of it in an array of its own length when b's array is larger than
// that by more than an eighth (and 32 bytes): the encoder of a field set writes into a buffer
// that grows by doubling (fieldpath.Set.ToJSON, which the API server's field manager encodes
// every entry with, leaves a pod's 659-byte status entry in an array of 1,152), and a stored
// object would keep the whole array for as long as it lives. The copy costs one allocation of
// the encoding's length, once for each value the table did not have.
func fit(b []byte) []byte {
	if spare := cap(b) - len(b); spare > 32 && spare > len(b)/8 {
		return bytes.Clone(b)
	}
	return b
}

func (in *Table) strs(ss []string) {
	for i := range ss {
		ss[i] = in.str(ss[i])
	}
}

// strMap returns m with its keys and values interned: a new map, since a key cannot be replaced
// in place.
func (in *Table) strMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[in.str(k)] = in.str(v)
	}
	return out
}

// Pod interns the fields of pod that pods of one template, or of one node, have in common, and
// the values every version of a pod repeats (its token volume's name). Names, UIDs, resource
// versions, IPs and container IDs, one pod's own, are left as decoded. pod must be the caller's
// alone while Pod runs.
func (in *Table) Pod(pod *v1.Pod) {
	in.objectMeta(&pod.ObjectMeta)
	in.podSpec(&pod.Spec)
	in.podStatus(&pod.Status)
}

func (in *Table) objectMeta(m *metav1.ObjectMeta) {
	m.Namespace = in.str(m.Namespace)
	m.GenerateName = in.str(m.GenerateName)
	m.Labels = in.strMap(m.Labels)
	m.Annotations = in.strMap(m.Annotations)
	in.strs(m.Finalizers)
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		r.APIVersion, r.Kind, r.Name, r.UID = in.str(r.APIVersion), in.str(r.Kind), in.str(r.Name), types.UID(in.str(string(r.UID)))
	}
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
		f.Manager, f.APIVersion, f.FieldsType, f.Subresource = in.str(f.Manager), in.str(f.APIVersion), in.str(f.FieldsType), in.str(f.Subresource)
		f.Operation = metav1.ManagedFieldsOperationType(in.str(string(f.Operation)))
		if f.FieldsV1 != nil {
			f.FieldsV1.Raw = in.raw(f.FieldsV1.Raw)
		}
	}
}

func (in *Table) podSpec(s *v1.PodSpec) {
	s.NodeName = in.str(s.NodeName)
	s.ServiceAccountName = in.str(s.ServiceAccountName)
	s.DeprecatedServiceAccount = in.str(s.DeprecatedServiceAccount)
	s.SchedulerName = in.str(s.SchedulerName)
	s.PriorityClassName = in.str(s.PriorityClassName)
	s.RestartPolicy = v1.RestartPolicy(in.str(string(s.RestartPolicy)))
	s.DNSPolicy = v1.DNSPolicy(in.str(string(s.DNSPolicy)))
	s.NodeSelector = in.strMap(s.NodeSelector)
	for i := range s.Volumes {
		in.volume(&s.Volumes[i])
	}
	for i := range s.InitContainers {
		in.container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		in.container(&s.Containers[i])
	}
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		t.Key, t.Value = in.str(t.Key), in.str(t.Value)
		t.Operator = v1.TolerationOperator(in.str(string(t.Operator)))
		t.Effect = v1.TaintEffect(in.str(string(t.Effect)))
	}
}

func (in *Table) volume(v *v1.Volume) {
	// The service account token volume's name (kube-api-access-<random>) is each pod's own, but
	// every version of the pod repeats it, and its mounts and their statuses name it again.
	v.Name = in.str(v.Name)
	if p := v.Projected; p != nil {
		for i := range p.Sources {
			src := &p.Sources[i]
			if t := src.ServiceAccountToken; t != nil {
				t.Path, t.Audience = in.str(t.Path), in.str(t.Audience)
			}
			if c := src.ConfigMap; c != nil {
				c.Name = in.str(c.Name)
				in.keyPaths(c.Items)
			}
			if s := src.Secret; s != nil {
				s.Name = in.str(s.Name)
				in.keyPaths(s.Items)
			}
			if d := src.DownwardAPI; d != nil {
				for j := range d.Items {
					item := &d.Items[j]
					item.Path = in.str(item.Path)
					if f := item.FieldRef; f != nil {
						f.APIVersion, f.FieldPath = in.str(f.APIVersion), in.str(f.FieldPath)
					}
				}
			}
		}
	}
	if c := v.ConfigMap; c != nil {
		c.Name = in.str(c.Name)
		in.keyPaths(c.Items)
	}
	if s := v.Secret; s != nil {
		s.SecretName = in.str(s.SecretName)
		in.keyPaths(s.Items)
	}
}

func (in *Table) keyPaths(items []v1.KeyToPath) {
	for i := range items {
		items[i].Key, items[i].Path = in.str(items[i].Key), in.str(items[i].Path)
	}
}

func (in *Table) container(c *v1.Container) {
	c.Name, c.Image = in.str(c.Name), in.str(c.Image)
	in.strs(c.Command)
	in.strs(c.Args)
	c.WorkingDir = in.str(c.WorkingDir)
	c.TerminationMessagePath = in.str(c.TerminationMessagePath)
	c.TerminationMessagePolicy = v1.TerminationMessagePolicy(in.str(string(c.TerminationMessagePolicy)))
	c.ImagePullPolicy = v1.PullPolicy(in.str(string(c.ImagePullPolicy)))
	for i := range c.Ports {
		p := &c.Ports[i]
		p.Name = in.str(p.Name)
		p.Protocol = v1.Protocol(in.str(string(p.Protocol)))
	}
	for i := range c.Env {
		e := &c.Env[i]
		e.Name, e.Value = in.str(e.Name), in.str(e.Value)
	}
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		m.Name, m.MountPath, m.SubPath = in.str(m.Name), in.str(m.MountPath), in.str(m.SubPath)
	}
}

func (in *Table) podStatus(s *v1.PodStatus) {
	s.Phase = v1.PodPhase(in.str(string(s.Phase)))
	s.HostIP = in.str(s.HostIP)
	for i := range s.HostIPs {
		s.HostIPs[i].IP = in.str(s.HostIPs[i].IP)
	}
	s.QOSClass = v1.PodQOSClass(in.str(string(s.QOSClass)))
	s.Reason = in.str(s.Reason)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type = v1.PodConditionType(in.str(string(c.Type)))
		c.Status = v1.ConditionStatus(in.str(string(c.Status)))
		c.Reason, c.Message = in.str(c.Reason), in.str(c.Message)
	}
	for _, list := range [][]v1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			cs := &list[i]
			cs.Name, cs.Image, cs.ImageID = in.str(cs.Name), in.str(cs.Image), in.str(cs.ImageID)
			if w := cs.State.Waiting; w != nil {
				w.Reason, w.Message = in.str(w.Reason), in.str(w.Message)
			}
			if t := cs.State.Terminated; t != nil {
				t.Reason, t.Message = in.str(t.Reason), in.str(t.Message)
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				t.Reason, t.Message = in.str(t.Reason), in.str(t.Message)
			}
			for j := range cs.VolumeMounts {
				m := &cs.VolumeMounts[j]
				m.Name, m.MountPath = in.str(m.Name), in.str(m.MountPath)
			}
		}
	}
}

// StoredPod interns what of pod it can replace without writing into memory that pod may share
// with another object: the strings of pod's own structs (its namespace, node name, phase, ...) and
// its managed fields, which it replaces with a new slice whose entries share their encodings
// with every other pod's equal ones (the creator's entry of a template's pods, and of every
// version of one pod). It writes nothing reached through a slice, map or pointer of pod: an API
// server's update may keep the stored version's spec or metadata in the new one, and readers of
// that version must never see a write. pod itself must be the caller's alone while StoredPod
// runs.
func (in *Table) StoredPod(pod *v1.Pod) {
	pod.Namespace, pod.GenerateName = in.str(pod.Namespace), in.str(pod.GenerateName)
	s := &pod.Spec
	s.NodeName, s.ServiceAccountName, s.DeprecatedServiceAccount = in.str(s.NodeName), in.str(s.ServiceAccountName), in.str(s.DeprecatedServiceAccount)
	s.SchedulerName, s.PriorityClassName = in.str(s.SchedulerName), in.str(s.PriorityClassName)
	s.RestartPolicy, s.DNSPolicy = v1.RestartPolicy(in.str(string(s.RestartPolicy))), v1.DNSPolicy(in.str(string(s.DNSPolicy)))
	st := &pod.Status
	st.Phase, st.QOSClass = v1.PodPhase(in.str(string(st.Phase))), v1.PodQOSClass(in.str(string(st.QOSClass)))
	st.HostIP, st.Reason = in.str(st.HostIP), in.str(st.Reason)
	pod.ManagedFields = in.managedFields(pod.ManagedFields)
}

// managedFields returns mf, or a copy of it whose entries' strings and encodings are interned
// when one of its encodings is not the table's yet. It never writes into mf.
func (in *Table) managedFields(mf []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for i, f := range mf {
		if f.FieldsV1 == nil || len(f.FieldsV1.Raw) == 0 {
			continue
		}
		raw := in.raw(f.FieldsV1.Raw)
		if &raw[0] == &f.FieldsV1.Raw[0] {
			continue
		}
		if out == nil {
			out = make([]metav1.ManagedFieldsEntry, len(mf))
			copy(out, mf)
		}
		out[i].FieldsV1 = &metav1.FieldsV1{Raw: raw}
	}
	if out == nil {
		return mf
	}
	for i := range out {
		f := &out[i]
		f.Manager, f.APIVersion, f.FieldsType, f.Subresource = in.str(f.Manager), in.str(f.APIVersion), in.str(f.FieldsType), in.str(f.Subresource)
		f.Operation = metav1.ManagedFieldsOperationType(in.str(string(f.Operation)))
	}
	return out
}

// StoredFields returns mf, the managed fields of an object of another kind than a pod or an
// event as an API server stores it (a node, a lease), or a copy of it whose entries' strings and
// encodings are interned: every node's lease names the same fields, and each version of a node
// or a lease the API server's field manager writes encodes its entries anew (fitted, see fit).
// It never writes into mf.
func (in *Table) StoredFields(mf []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	return in.managedFields(mf)
}

// StoredEvent interns what of ev, an event as an API server stores it, events repeat: the
// strings of its own structs (its namespace, the involved object's kind, namespace, API version
// and field path, the reason, the message, the source, the type, the action, the reporting
// controller and instance) and its managed fields, whose encoding is the same for every event of
// one writer and shape. A kubelet's events repeat each of these for every pod and every node: a
// fleet's hundred thousand events, kept an hour, otherwise keep a copy of each (their messages
// are formatted anew for each event, their managed fields encoded anew by the API server's field
// manager, and all of it decoded anew from a request body over HTTP). The event's name, and the
// involved object's name, UID and resource version, one object's own, are left as they are.
// Under StoredPod's rule, nothing reached through a slice, map or pointer of ev is written (a
// patch of an event's count keeps the rest of the stored version); ev itself must be the
// caller's alone while StoredEvent runs.
//
// An event's managed fields also share their list with the event stored before it when the two
// are equal, times included: a node's kubelet writes its events of one second with one field
// set and one time (the API server's clock, to the second), and a fleet writes thousands of
// events a second, each of which would otherwise keep a list, a time and a field set's struct
// of its own for the hour it lives.
func (in *Table) StoredEvent(ev *v1.Event) {
	ev.Namespace = in.str(ev.Namespace)
	o := &ev.InvolvedObject
	o.Kind, o.Namespace, o.APIVersion, o.FieldPath = in.str(o.Kind), in.str(o.Namespace), in.str(o.APIVersion), in.str(o.FieldPath)
	ev.Reason, ev.Message, ev.Type, ev.Action = in.str(ev.Reason), in.str(ev.Message), in.str(ev.Type), in.str(ev.Action)
	ev.Source.Component, ev.Source.Host = in.str(ev.Source.Component), in.str(ev.Source.Host)
	ev.ReportingController, ev.ReportingInstance = in.str(ev.ReportingController), in.str(ev.ReportingInstance)
	mf := in.managedFields(ev.ManagedFields)
	if sameEntries(mf, in.eventFields) {
		mf = in.eventFields
	} else if len(mf) > 0 {
		in.eventFields = mf
	}
	ev.ManagedFields = mf
}

// sameEntries reports whether a and b are the same managed fields: equal strings, times of the
// same value (time.Time's ==, location included) and field sets of the same bytes.
func sameEntries(a, b []metav1.ManagedFieldsEntry) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Manager != y.Manager || x.Operation != y.Operation || x.APIVersion != y.APIVersion ||
			x.FieldsType != y.FieldsType || x.Subresource != y.Subresource {
			return false
		}
		if (x.Time == nil) != (y.Time == nil) || x.Time != nil && x.Time.Time != y.Time.Time {
			return false
		}
		if (x.FieldsV1 == nil) != (y.FieldsV1 == nil) || x.FieldsV1 != nil && !bytes.Equal(x.FieldsV1.Raw, y.FieldsV1.Raw) {
			return false
		}
	}
	return true
}
