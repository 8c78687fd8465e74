package fakeapiserver

import (
	"math"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// metrics.k8s.io/v1beta1, the resource metrics API `kubectl top` reads, served as metrics-server
// serves it from what it scraped of every node's /metrics/resource: NodeMetrics and PodMetrics,
// read only, with the CPU usage the rate between a node's or container's two latest samples and
// the memory usage its latest working set. The samples come from Options.ResourceMetrics; without
// one the group is not served at all, as on a cluster without metrics-server, and kubectl top
// says "Metrics API not available".

var metricsV = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

// ResourceMetrics is where the server finds the usage the resource metrics API reports: the two
// latest samples of every node and every container, as metrics-server keeps them from its
// scrapes of the kubelets' /metrics/resource. It is called from request goroutines, at every
// request on metrics.k8s.io.
type ResourceMetrics interface {
	ResourceUsage() ResourceUsage
}

// ResourceUsage is what ResourceMetrics returns.
type ResourceUsage struct {
	Nodes []NodeUsage
	Pods  []PodUsage
}

// NodeUsage is one node's two latest samples of node_cpu_usage_seconds_total and
// node_memory_working_set_bytes.
type NodeUsage struct {
	Name             string
	Previous, Latest UsageSample
}

// PodUsage is the samples of one pod's containers.
type PodUsage struct {
	Namespace, Name string
	Containers      []ContainerUsage
}

// ContainerUsage is one container's two latest samples of container_cpu_usage_seconds_total and
// container_memory_working_set_bytes.
type ContainerUsage struct {
	Name             string
	Previous, Latest UsageSample
}

// UsageSample is one sample: the cumulative CPU time and the working set at Timestamp, of a node
// or container that started at StartTime.
type UsageSample struct {
	Timestamp   time.Time
	StartTime   time.Time
	CPUSeconds  float64
	MemoryBytes uint64
}

func nodeMetricsResource() *resource {
	return &resource{
		name: "nodes", singular: "node", kind: "NodeMetrics", gv: metricsV, verbs: verbGet | verbList, view: true,
		available: func(s *Server) bool { return s.resourceMetrics != nil },
		newObj:    func() runtime.Object { return &metricsv1beta1.NodeMetrics{} },
		fieldSet:  metaFields,
		validate:  func(runtime.Object) field.ErrorList { return nil },
		columns:   usageColumns,
		cells:     usageCells,
		serve:     (*Server).serveNodeMetrics,
	}
}

func podMetricsResource() *resource {
	return &resource{
		name: "pods", singular: "pod", kind: "PodMetrics", gv: metricsV, namespaced: true, verbs: verbGet | verbList, view: true,
		available: func(s *Server) bool { return s.resourceMetrics != nil },
		newObj:    func() runtime.Object { return &metricsv1beta1.PodMetrics{} },
		fieldSet:  metaFields,
		validate:  func(runtime.Object) field.ErrorList { return nil },
		columns:   usageColumns,
		cells:     usageCells,
		serve:     (*Server).servePodMetrics,
	}
}

// usage is metrics-server's resourceUsage: the CPU rate over the window between two samples, in
// nanocores, and the latest working set; false when the samples do not make a window (the
// counter went back, or a restart lies between them).
func usage(prev, last UsageSample) (corev1.ResourceList, metav1.Time, metav1.Duration, bool) {
	window := last.Timestamp.Sub(prev.Timestamp)
	if window <= 0 || last.StartTime.Before(prev.StartTime) || last.CPUSeconds < prev.CPUSeconds {
		return nil, metav1.Time{}, metav1.Duration{}, false
	}
	nanocores := uint64((last.CPUSeconds - prev.CPUSeconds) * 1e9 / window.Seconds())
	cpu := *apiresource.NewScaledQuantity(int64(min(nanocores, math.MaxInt64)), -9)
	cpu.Format = apiresource.DecimalSI
	mem := *apiresource.NewQuantity(int64(min(last.MemoryBytes, math.MaxInt64)), apiresource.BinarySI)
	return corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
		metav1.NewTime(last.Timestamp), metav1.Duration{Duration: window}, true
}

// serveNodeMetrics serves NodeMetrics of the stored nodes the request selects (the label
// selector applies to the nodes, as in metrics-server), for those with usable samples.
func (s *Server) serveNodeMetrics(w http.ResponseWriter, r *http.Request, t target, verb verbs) error {
	opts, err := parseListOptions(r, t)
	if err != nil {
		return err
	}
	samples := map[string]NodeUsage{}
	for _, n := range s.resourceMetrics.ResourceUsage().Nodes {
		samples[n.Name] = n
	}
	var nodes []*corev1.Node
	_ = s.store.lockedAs(r.Context(), t.class, func() error {
		for _, e := range s.store.list(s.store.resource("nodes"), "") {
			nodes = append(nodes, e.obj.(*corev1.Node))
		}
		return nil
	})
	var items []runtime.Object
	for _, node := range nodes {
		if t.name != "" && node.Name != t.name {
			continue
		}
		if t.name != "" || opts.labels.Matches(labels.Set(node.Labels)) {
			sample, ok := samples[node.Name]
			if !ok {
				continue
			}
			u, ts, window, ok := usage(sample.Previous, sample.Latest)
			if !ok {
				continue
			}
			m := &metricsv1beta1.NodeMetrics{
				TypeMeta:   metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: metricsV.String()},
				ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: node.Labels, CreationTimestamp: s.now()},
				Timestamp:  ts, Window: window, Usage: u,
			}
			if opts.fields.Matches(metaFields(m)) {
				items = append(items, m)
			}
		}
	}
	if verb == verbGet {
		if len(items) == 0 {
			if _, exists := findNode(nodes, t.name); !exists {
				return apierrors.NewNotFound(corev1.Resource("node"), t.name)
			}
			return apierrors.NewNotFound(metricsV.WithResource("nodemetrics").GroupResource(), t.name)
		}
		return s.writeUsage(w, r, t, items, nil)
	}
	return s.writeUsage(w, r, t, items, &metricsv1beta1.NodeMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: metricsV.String()},
	})
}

func findNode(nodes []*corev1.Node, name string) (*corev1.Node, bool) {
	for _, n := range nodes {
		if n.Name == name {
			return n, true
		}
	}
	return nil, false
}

// servePodMetrics serves PodMetrics of the stored pods the request selects, for those whose every
// container has usable samples, each with the earliest timestamp and window of its containers'.
func (s *Server) servePodMetrics(w http.ResponseWriter, r *http.Request, t target, verb verbs) error {
	opts, err := parseListOptions(r, t)
	if err != nil {
		return err
	}
	samples := map[string]PodUsage{}
	for _, p := range s.resourceMetrics.ResourceUsage().Pods {
		samples[p.Namespace+"/"+p.Name] = p
	}
	var pods []*corev1.Pod
	_ = s.store.lockedAs(r.Context(), t.class, func() error {
		for _, e := range s.store.list(s.store.resource("pods"), t.namespace) {
			pods = append(pods, e.obj.(*corev1.Pod))
		}
		return nil
	})
	var items []runtime.Object
	found := false
	for _, pod := range pods {
		if t.name != "" && pod.Name != t.name {
			continue
		}
		found = true
		if t.name == "" && !opts.labels.Matches(labels.Set(pod.Labels)) {
			continue
		}
		sample, ok := samples[pod.Namespace+"/"+pod.Name]
		if !ok || len(sample.Containers) == 0 {
			continue
		}
		m := &metricsv1beta1.PodMetrics{
			TypeMeta:   metav1.TypeMeta{Kind: "PodMetrics", APIVersion: metricsV.String()},
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, Labels: pod.Labels, CreationTimestamp: s.now()},
		}
		complete := true
		for _, c := range sample.Containers {
			u, ts, window, ok := usage(c.Previous, c.Latest)
			if !ok {
				complete = false
				break
			}
			m.Containers = append(m.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: u})
			if m.Timestamp.IsZero() || ts.Before(&m.Timestamp) {
				m.Timestamp, m.Window = ts, window
			}
		}
		if complete && opts.fields.Matches(metaFields(m)) {
			items = append(items, m)
		}
	}
	if verb == verbGet {
		key := t.namespace + "/" + t.name
		switch {
		case !found:
			return apierrors.NewNotFound(corev1.Resource("pods"), key)
		case len(items) == 0:
			return apierrors.NewNotFound(metricsV.WithResource("podmetrics").GroupResource(), key)
		}
		return s.writeUsage(w, r, t, items, nil)
	}
	return s.writeUsage(w, r, t, items, &metricsv1beta1.PodMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: metricsV.String()},
	})
}

// writeUsage answers with the one item (list nil), the list, or their table.
func (s *Server) writeUsage(w http.ResponseWriter, r *http.Request, t target, items []runtime.Object, list runtime.Object) error {
	out, tableVersion, err := negotiateJSON(r)
	if err != nil {
		return err
	}
	if out == outputTable {
		entries := make([]*entry, len(items))
		for i, item := range items {
			e, err := dryRunEntry(t.res, item)
			if err != nil {
				return err
			}
			entries[i] = e
		}
		table, err := s.buildTable(tableVersion, t.res, entries, "", metav1.IncludeMetadata, true)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, table)
		return nil
	}
	switch l := list.(type) {
	case nil:
		writeJSON(w, http.StatusOK, items[0])
	case *metricsv1beta1.NodeMetricsList:
		l.Items = []metricsv1beta1.NodeMetrics{}
		for _, item := range items {
			l.Items = append(l.Items, *item.(*metricsv1beta1.NodeMetrics))
		}
		writeJSON(w, http.StatusOK, l)
	case *metricsv1beta1.PodMetricsList:
		l.Items = []metricsv1beta1.PodMetrics{}
		for _, item := range items {
			l.Items = append(l.Items, *item.(*metricsv1beta1.PodMetrics))
		}
		writeJSON(w, http.StatusOK, l)
	}
	return nil
}

// usageColumns are metrics-server's: the name, each resource's usage, and the window.
var usageColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
	{Name: "cpu", Type: "string", Format: "quantity"},
	{Name: "memory", Type: "string", Format: "quantity"},
	{Name: "Window", Type: "string", Format: "duration"},
}

func usageCells(_ time.Time, obj runtime.Object) []any {
	var name string
	var total corev1.ResourceList
	var window time.Duration
	switch m := obj.(type) {
	case *metricsv1beta1.NodeMetrics:
		name, total, window = m.Name, m.Usage, m.Window.Duration
	case *metricsv1beta1.PodMetrics:
		name, window = m.Name, m.Window.Duration
		total = corev1.ResourceList{}
		for _, c := range m.Containers {
			for k, v := range c.Usage {
				sum := total[k]
				sum.Add(v)
				total[k] = sum
			}
		}
	}
	cpu, mem := total[corev1.ResourceCPU], total[corev1.ResourceMemory]
	return []any{name, cpu.String(), mem.String(), window.String()}
}
