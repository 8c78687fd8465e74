// Command fleetload measures a simulated fleet: it creates pods bound round-robin to the nodes
// named <prefix>-<i>, and reports when every node is Ready and every pod Running, with the
// simulator's CPU time and RSS (now and at its peak) read from /proc. It is the end-to-end
// benchmark of docs/benchmarks.md, not part of the simulator; BenchmarkFleet runs it against a
// `minikubelet run --nodes N` it starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.kubeconfig, "kubeconfig", "", "kubeconfig of the simulator's API server")
	flag.IntVar(&cfg.nodes, "nodes", 1000, "nodes the simulator runs")
	flag.StringVar(&cfg.prefix, "node-name-prefix", "sim", "the simulator's --node-name-prefix")
	flag.IntVar(&cfg.perNode, "pods-per-node", 30, "pods to bind to each node")
	flag.IntVar(&cfg.pid, "pid", 0, "the simulator's process id, for CPU and RSS")
	flag.DurationVar(&cfg.steady, "steady", 30*time.Second, "how long to measure the steady state after all pods run")
	flag.IntVar(&cfg.workers, "workers", 32, "parallel pod creations")
	flag.Parse()
	if _, err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fleetload:", err)
		os.Exit(1)
	}
}

// config is what one measurement needs.
type config struct {
	kubeconfig string
	nodes      int
	prefix     string
	perNode    int
	pid        int
	steady     time.Duration
	workers    int
}

// result is what one measurement found.
type result struct {
	// created is how long creating every pod took, and failed how many creates failed.
	created time.Duration
	failed  int64
	// running is the time from the first create until every node was Ready and every pod Running.
	running time.Duration
	// cpuToRunning is the simulator's CPU time from its start until then, in seconds; zero
	// without a pid.
	cpuToRunning float64
	// steadyCores is the simulator's CPU use after that, in cores; rssKB and peakRSSKB its
	// resident set at the end and at its peak (VmRSS and VmHWM). Zero without a pid.
	steadyCores      float64
	rssKB, peakRSSKB int64
}

// run creates the pods, waits for every node Ready and every pod Running, then measures the steady
// state, printing its progress to out.
func run(ctx context.Context, cfg config, out io.Writer) (result, error) {
	var res result
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	if err != nil {
		return res, err
	}
	rc.QPS, rc.Burst = -1, 0 // no client-side rate limit
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return res, err
	}
	start := time.Now()
	width := len(strconv.Itoa(cfg.nodes - 1))
	total := cfg.nodes * cfg.perNode
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				node := fmt.Sprintf("%s-%0*d", cfg.prefix, width, i%cfg.nodes)
				pod := &v1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%d", i), Namespace: "default"},
					Spec:       v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "main", Image: "busybox:1.36"}}},
				}
				if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res.created, res.failed = time.Since(start), failed.Load()
	fmt.Fprintf(out, "created %d pods in %v (%d failed)\n", total, res.created.Round(time.Millisecond), res.failed)
	if err := waitAll(ctx, client, cfg, total, func(ready, running int) {
		fmt.Fprintf(out, "%6.1fs nodes ready %d/%d, pods running %d/%d, rss %s\n", time.Since(start).Seconds(), ready, cfg.nodes, running, total, rss(cfg.pid))
	}); err != nil {
		return res, err
	}
	res.running = time.Since(start)
	fmt.Fprintf(out, "all Ready and Running %v after the first create\n", res.running.Round(time.Millisecond))
	c1, _ := cpuSeconds(cfg.pid)
	res.cpuToRunning = c1
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.steady):
	}
	c2, _ := cpuSeconds(cfg.pid)
	res.steadyCores = (c2 - c1) / cfg.steady.Seconds()
	res.rssKB, res.peakRSSKB = statusKB(cfg.pid, "VmRSS:"), statusKB(cfg.pid, "VmHWM:")
	fmt.Fprintf(out, "steady state: %.3f cores over %v, rss %s, peak rss %d kB\n", res.steadyCores, cfg.steady, rss(cfg.pid), res.peakRSSKB)
	return res, nil
}

// waitAll returns once cfg.nodes nodes are Ready and total pods of the default namespace
// Running, calling progress with both counts every 2 s. It watches nodes and pods (one list, then
// their changes) instead of listing them again and again: a list of 30,000 pods every 2 s cost
// the simulator's API server more than its kubelets' own writes. The watches end when it returns,
// so that the steady state measured after it is the simulator's alone.
func waitAll(ctx context.Context, client kubernetes.Interface, cfg config, total int, progress func(ready, running int)) error {
	var t tally
	t.ready, t.running = map[string]bool{}, map[string]bool{}
	nodes := informers.NewSharedInformerFactory(client, 0)
	pods := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"))
	if _, err := nodes.Core().V1().Nodes().Informer().AddEventHandler(t.handler(t.ready, func(obj any) (string, bool) {
		n, ok := obj.(*v1.Node)
		if !ok {
			return "", false
		}
		for _, c := range n.Status.Conditions {
			if c.Type == v1.NodeReady {
				return n.Name, c.Status == v1.ConditionTrue
			}
		}
		return n.Name, false
	})); err != nil {
		return err
	}
	if _, err := pods.Core().V1().Pods().Informer().AddEventHandler(t.handler(t.running, func(obj any) (string, bool) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return "", false
		}
		return p.Name, p.Status.Phase == v1.PodRunning
	})); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		nodes.Shutdown()
		pods.Shutdown()
	}()
	nodes.Start(stop)
	pods.Start(stop)
	for {
		ready, running := t.counts()
		progress(ready, running)
		if ready == cfg.nodes && running == total {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// tally counts the nodes that are Ready and the pods that are Running, as the watches see them.
type tally struct {
	mu             sync.Mutex
	ready, running map[string]bool // by name: true while Ready (Running)
}

// handler keeps set up to date with the watched objects: is reports an object's name and whether
// it counts (Ready, Running); an object it cannot read (an empty name) is left out.
func (t *tally) handler(set map[string]bool, is func(obj any) (string, bool)) cache.ResourceEventHandler {
	put := func(obj any) {
		name, ok := is(obj)
		if name == "" {
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		set[name] = ok
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { put(obj) },
		UpdateFunc: func(_, obj any) { put(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if name, _ := is(obj); name != "" {
				t.mu.Lock()
				defer t.mu.Unlock()
				delete(set, name)
			}
		},
	}
}

// counts returns how many nodes are Ready and how many pods Running.
func (t *tally) counts() (ready, running int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ok := range t.ready {
		if ok {
			ready++
		}
	}
	for _, ok := range t.running {
		if ok {
			running++
		}
	}
	return ready, running
}

// cpuSeconds is the process's user+system CPU time.
func cpuSeconds(pid int) (float64, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // USER_HZ
}

// rss is the process's resident set as /proc shows it ("123 kB"), or "?".
func rss(pid int) string {
	if pid == 0 {
		return "?"
	}
	if kb := statusKB(pid, "VmRSS:"); kb > 0 {
		return strconv.FormatInt(kb, 10) + " kB"
	}
	return "?"
}

// statusKB reads one size field of /proc/<pid>/status in kB, 0 when it cannot.
func statusKB(pid int, field string) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	return 0
}
