package kubeletserver

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// The made-up usage: every running container uses a steady 1 to 9 millicores and 4 to 31 MiB,
// picked from its namespace, pod and container names, so the figures are the same at every
// scrape and across restarts; the node adds its own system usage.
const (
	nodeBaseNanoCores = 100_000_000       // 100m for the node's system daemons
	nodeBaseMemory    = 512 * 1024 * 1024 // 512 MiB
	mib               = 1024 * 1024
)

// usage is one running container's made-up usage at an instant.
type usage struct {
	namespace, pod, container string
	started                   time.Time
	nanoCores, coreNanoSec    uint64
	workingSet                uint64
}

// containerUsage returns the usage of every running container of the snapshot at now, in pod
// order.
func containerUsage(s *Snapshot, now time.Time) []usage {
	var out []usage
	for _, pv := range s.Pods {
		if pv.Runtime == nil {
			continue
		}
		for _, c := range pv.Runtime.ContainerStatuses {
			if c.State != kubecontainer.ContainerStateRunning {
				continue
			}
			h := fnv.New32a()
			fmt.Fprintf(h, "%s/%s/%s", pv.Pod.Namespace, pv.Pod.Name, c.Name)
			sum := uint64(h.Sum32())
			u := usage{namespace: pv.Pod.Namespace, pod: pv.Pod.Name, container: c.Name, started: c.StartedAt,
				nanoCores: (1 + sum%9) * 1_000_000, workingSet: (4 + sum%28) * mib}
			if d := now.Sub(c.StartedAt); d > 0 {
				u.coreNanoSec = uint64(d.Seconds() * float64(u.nanoCores))
			}
			out = append(out, u)
		}
	}
	return out
}

// statsSummary is /stats/summary: the Summary API on the made-up usage.
func (h *NodeHandler) statsSummary(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s := h.snapshot(r)
	now := h.opts.Clock.Now()
	ts := metav1.NewTime(now)
	summary := statsv1alpha1.Summary{Pods: []statsv1alpha1.PodStats{}}
	nodeCores, nodeCum, nodeMem := uint64(nodeBaseNanoCores), uint64(0), uint64(nodeBaseMemory)
	byPod := map[string]int{} // index in summary.Pods
	for _, u := range containerUsage(s, now) {
		key := u.namespace + "/" + u.pod
		i, ok := byPod[key]
		if !ok {
			pv, _ := s.find(u.namespace, u.pod)
			summary.Pods = append(summary.Pods, statsv1alpha1.PodStats{
				PodRef: statsv1alpha1.PodReference{Name: u.pod, Namespace: u.namespace, UID: string(pv.Pod.UID)},
				CPU:    &statsv1alpha1.CPUStats{Time: ts, UsageNanoCores: new(uint64), UsageCoreNanoSeconds: new(uint64)},
				Memory: &statsv1alpha1.MemoryStats{Time: ts, WorkingSetBytes: new(uint64), UsageBytes: new(uint64)},
			})
			i = len(summary.Pods) - 1
			if pv.HasStatus && pv.Status.StartTime != nil {
				summary.Pods[i].StartTime = *pv.Status.StartTime
			}
			byPod[key] = i
		}
		ps := &summary.Pods[i]
		nc, cum, ws := u.nanoCores, u.coreNanoSec, u.workingSet
		ps.Containers = append(ps.Containers, statsv1alpha1.ContainerStats{
			Name: u.container, StartTime: metav1.NewTime(u.started),
			CPU:    &statsv1alpha1.CPUStats{Time: ts, UsageNanoCores: &nc, UsageCoreNanoSeconds: &cum},
			Memory: &statsv1alpha1.MemoryStats{Time: ts, WorkingSetBytes: &ws, UsageBytes: &ws},
		})
		*ps.CPU.UsageNanoCores += nc
		*ps.CPU.UsageCoreNanoSeconds += cum
		*ps.Memory.WorkingSetBytes += ws
		*ps.Memory.UsageBytes += ws
		nodeCores, nodeCum, nodeMem = nodeCores+nc, nodeCum+cum, nodeMem+ws
	}
	summary.Node = statsv1alpha1.NodeStats{
		NodeName: s.Node,
		CPU:      &statsv1alpha1.CPUStats{Time: ts, UsageNanoCores: &nodeCores, UsageCoreNanoSeconds: &nodeCum},
		Memory:   &statsv1alpha1.MemoryStats{Time: ts, WorkingSetBytes: &nodeMem, UsageBytes: &nodeMem},
	}
	pods := summary.Pods
	summary.Pods = []statsv1alpha1.PodStats{}
	writeJSONList(w, http.StatusOK, &summary, "pods", len(pods), func(i int) any { return &pods[i] })
}

// resourceMetrics is /metrics/resource: the STABLE series metrics-server scrapes, on the same
// made-up usage as /stats/summary.
func (h *NodeHandler) resourceMetrics(w http.ResponseWriter, r *http.Request) {
	s := h.snapshot(r)
	now := h.opts.Clock.Now()
	ms := now.UnixMilli()
	us := containerUsage(s, now)
	// Written as it is formatted, through a small buffer, rather than built whole first.
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	b := bufio.NewWriterSize(w, 4096)
	defer b.Flush()
	family := func(name, typ, help string) {
		fmt.Fprintf(b, "# HELP %s [STABLE] %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	nodeCum, nodeMem := uint64(0), uint64(nodeBaseMemory)
	for _, u := range us {
		nodeCum += u.coreNanoSec
		nodeMem += u.workingSet
	}
	labels := func(u usage) string {
		return fmt.Sprintf(`container=%q,namespace=%q,pod=%q`, u.container, u.namespace, u.pod)
	}
	family("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the container in core-seconds")
	for _, u := range us {
		fmt.Fprintf(b, "container_cpu_usage_seconds_total{%s} %g %d\n", labels(u), float64(u.coreNanoSec)/1e9, ms)
	}
	family("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes")
	for _, u := range us {
		fmt.Fprintf(b, "container_memory_working_set_bytes{%s} %d %d\n", labels(u), u.workingSet, ms)
	}
	family("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds")
	for _, u := range us {
		fmt.Fprintf(b, "container_start_time_seconds{%s} %g %d\n", labels(u), float64(u.started.UnixNano())/1e9, u.started.UnixMilli())
	}
	family("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds")
	fmt.Fprintf(b, "node_cpu_usage_seconds_total %g %d\n", float64(nodeCum)/1e9, ms)
	family("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes")
	fmt.Fprintf(b, "node_memory_working_set_bytes %d %d\n", nodeMem, ms)
	type podSum struct {
		ns, pod  string
		cum, mem uint64
	}
	var pods []*podSum
	idx := map[string]*podSum{}
	for _, u := range us {
		k := u.namespace + "/" + u.pod
		p := idx[k]
		if p == nil {
			p = &podSum{ns: u.namespace, pod: u.pod}
			idx[k] = p
			pods = append(pods, p)
		}
		p.cum += u.coreNanoSec
		p.mem += u.workingSet
	}
	family("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds")
	for _, p := range pods {
		fmt.Fprintf(b, "pod_cpu_usage_seconds_total{namespace=%q,pod=%q} %g %d\n", p.ns, p.pod, float64(p.cum)/1e9, ms)
	}
	family("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes")
	for _, p := range pods {
		fmt.Fprintf(b, "pod_memory_working_set_bytes{namespace=%q,pod=%q} %d %d\n", p.ns, p.pod, p.mem, ms)
	}
	family("resource_scrape_error", "gauge", "1 if there was an error while getting container metrics, 0 otherwise")
	b.WriteString("resource_scrape_error 0\n")
}
