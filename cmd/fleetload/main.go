// Command fleetload measures a simulated fleet: it watches the nodes and the pods from before its
// first create, creates pods bound round-robin to the nodes named <prefix>-<i>, and reports when
// every pod was created, when every node was Ready and every pod Running and Ready, and the
// spread of each pod's time from its create to Running and Ready, with the simulator's CPU time
// and RSS (now and at its peak) read from /proc and, on request, its CPU and heap profiles. It is
// the end-to-end benchmark of docs/benchmarks.md, not part of the simulator; BenchmarkFleet runs
// it against a `minikubelet run --nodes N` it starts.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "fetch the simulator's CPU profile of the first -profile-seconds from the first create (cpu.pprof) and its heap profile once every pod runs (heap.pprof) from the first node's kubelet server into this directory; the simulator needs enableProfilingHandler: true in its --config and --anonymous-auth=true --authorization-mode AlwaysAllow (fleetload's requests carry no credentials)")
	flag.DurationVar(&cfg.profileFor, "profile-seconds", time.Minute, "how long the CPU profile of -profile-dir runs, in whole seconds (a fraction rounds up; at least 1s)")
	flag.DurationVar(&cfg.goroutinesEvery, "profile-goroutines-every", 0, "with -profile-dir, also fetch the simulator's goroutine profile (its text form, goroutine-<n>-<milliseconds>ms.txt, n counting the fetches from 1) this often from the first create until every pod is created: where the creates wait while they stall. Each fetch stops the simulator's world briefly while the stacks are collected (pprof's debug=1 goroutine dump); zero fetches none")
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
	// profileDir, when set, is where the simulator's CPU profile of the first profileFor and
	// its heap profile once every pod runs go, read from the first node's kubelet server.
	profileDir string
	profileFor time.Duration
	// goroutinesEvery, when positive with profileDir, is how often the simulator's goroutine
	// profile is fetched while the pods are created.
	goroutinesEvery time.Duration
}

// result is what one measurement found. Every time is counted from the first create.
type result struct {
	// created is how long creating every pod took, and failed how many creates failed.
	created time.Duration
	failed  int64
	// running is the time until every node was Ready and every pod Running, as the watches
	// started before the first create saw it: the moment the last of them arrived.
	running time.Duration
	// ready is the time until every node and every pod was Ready (the pod's Ready condition).
	ready time.Duration
	// toRunning and toReady are the times from a pod's creation (when its create returned or
	// the watch first saw it, whichever came first) until the watch saw it Running and Ready:
	// what a node takes, without the wait for the other pods' creates.
	toRunning, toReady spread
	// relists is how many times a watch fetched everything again after its first list, until
	// then: a watch that fell behind the server's history (410 Gone) or lost its connection
	// lists again, and the changes it missed arrive late, at that list.
	relists int64
	// cpuToRunning is the simulator's CPU time from its start until every pod ran, in seconds;
	// zero without a pid. selfCPU is fleetload's own over the same time: its creates and the
	// watches' decoding share the machine with the simulator.
	cpuToRunning, selfCPU float64
	// steadyCores is the simulator's CPU use after that, in cores; rssKB and peakRSSKB its
	// resident set at the end and at its peak (VmRSS and VmHWM). Zero without a pid.
	steadyCores      float64
	rssKB, peakRSSKB int64
}

// spread is a distribution of per-pod times.
type spread struct{ median, p99, max time.Duration }

// spreadOf returns the median, 99th percentile (nearest rank) and maximum of ds, which it sorts.
func spreadOf(ds []time.Duration) spread {
	if len(ds) == 0 {
		return spread{}
	}
	slices.Sort(ds)
	rank := func(q float64) time.Duration {
		i := int(math.Ceil(q*float64(len(ds)))) - 1
		return ds[max(i, 0)]
	}
	return spread{median: rank(0.5), p99: rank(0.99), max: ds[len(ds)-1]}
}

func (s spread) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("median %v, p99 %v, max %v", r(s.median), r(s.p99), r(s.max))
}

// run starts watching nodes and pods, creates the pods, waits for every node Ready and every pod
// Running and Ready, then measures the steady state, printing its progress to out.
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
	total := cfg.nodes * cfg.perNode
	profileQuery, err := cpuProfileQuery(cfg)
	if err != nil {
		return res, err
	}
	if err := checkGoroutinesEvery(cfg); err != nil {
		return res, err
	}
	// The watches start, and have listed, before the first create: the times below are when
	// each change arrived, not when a list after the creation found it. They refuse pods of the
	// names this run creates that exist already: those would count as this run's.
	w, err := watchFleet(ctx, client, cfg.nodes, total)
	if err != nil {
		return res, err
	}
	defer w.stop()
	self0, _ := cpuSeconds(os.Getpid())
	start := time.Now()
	w.start(start)
	profiled := make(chan error, 1)
	if cfg.profileDir != "" {
		go func() {
			profiled <- fetchProfile(ctx, w, cfg, profileQuery, "cpu.pprof")
		}()
	} else {
		profiled <- nil
	}
	width := len(strconv.Itoa(cfg.nodes - 1))
	var next, failed atomic.Int64
	var firstFailure atomic.Pointer[error]
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
					ObjectMeta: metav1.ObjectMeta{Name: podName(i), Namespace: "default"},
					Spec:       v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "main", Image: "busybox:1.36"}}},
				}
				got, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
				if err != nil {
					failed.Add(1)
					err = fmt.Errorf("create pod default/%s: %w", pod.Name, err)
					firstFailure.CompareAndSwap(nil, &err)
					continue
				}
				w.created(got.Name, got.UID, time.Now())
			}
		})
	}
	progress := func() {
		s := w.snapshot()
		fmt.Fprintf(out, "%6.1fs pods created %d/%d, nodes ready %d/%d, pods running %d/%d, pods ready %d/%d, rss %s\n",
			time.Since(start).Seconds(), s.created, total, s.readyNodes, cfg.nodes, s.running, total, s.readyPods, total, rss(cfg.pid))
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	created := make(chan struct{})
	go func() { wg.Wait(); close(created) }()
	if cfg.profileDir != "" && cfg.goroutinesEvery > 0 {
		stacks := sync.WaitGroup{}
		defer stacks.Wait()
		stacks.Go(func() {
			t := time.NewTicker(cfg.goroutinesEvery)
			defer t.Stop()
			fetchGoroutines(ctx, w, cfg, start, time.Now, t.C, created, out)
		})
	}
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			<-created
			return res, ctx.Err()
		case <-tick.C:
			progress()
		case <-created:
			waiting = false
		}
	}
	res.created, res.failed = time.Since(start), failed.Load()
	fmt.Fprintf(out, "created %d pods in %v (%d failed)\n", total, res.created.Round(time.Millisecond), res.failed)
	if res.failed > 0 {
		// The pods that were not created never run: waiting for every pod would never end, and
		// a fleet with fewer pods is not the one measured.
		return res, fmt.Errorf("%d of %d creates failed; the first: %w", res.failed, total, *firstFailure.Load())
	}
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
			progress()
		case <-w.done:
			waiting = false
		}
	}
	res.selfCPU, _ = cpuSeconds(os.Getpid())
	res.selfCPU -= self0
	res.cpuToRunning, _ = cpuSeconds(cfg.pid)
	if cfg.profileDir != "" {
		if err := fetchProfile(ctx, w, cfg, "heap", "heap.pprof"); err != nil {
			fmt.Fprintf(out, "heap profile: %v\n", err)
		}
	}
	w.stop() // the steady state below is the simulator's alone
	progress()
	res.running, res.ready, res.toRunning, res.toReady = w.times()
	res.relists = w.relists()
	fmt.Fprintf(out, "all Ready and Running %v after the first create (every pod Running %v, Ready %v; created in %v)\n",
		max(res.running, res.ready).Round(time.Millisecond), res.running.Round(time.Millisecond), res.ready.Round(time.Millisecond), res.created.Round(time.Millisecond))
	fmt.Fprintf(out, "a pod's create to Running: %v; to Ready: %v; the watches relisted %d times\n", res.toRunning, res.toReady, res.relists)
	fmt.Fprintf(out, "fleetload's own CPU until then: %.1f s\n", res.selfCPU)
	// The steady state is the simulator's alone: it begins once the CPU profile (whose sampling
	// costs the simulator CPU), the heap profile's fetch and the watches have ended, and its CPU
	// time is counted from then, not from every pod's Running.
	if err := <-profiled; err != nil {
		fmt.Fprintf(out, "CPU profile: %v\n", err)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	c1, _ := cpuSeconds(cfg.pid)
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

// podPrefix begins the name of every pod fleetload creates: podName(i) for i below the total.
const podPrefix = "load-"

func podName(i int) string { return podPrefix + strconv.Itoa(i) }

// cpuProfileQuery is the kubelet server's path of cfg.profileFor's CPU profile. The profile's
// seconds are whole and pprof reads 0 as its default of 30: a fraction of a second rounds up.
func cpuProfileQuery(cfg config) (string, error) {
	if cfg.profileDir == "" {
		return "", nil
	}
	if cfg.profileFor <= 0 {
		return "", fmt.Errorf("-profile-seconds %v: want a positive duration", cfg.profileFor)
	}
	return fmt.Sprintf("profile?seconds=%d", int(math.Ceil(cfg.profileFor.Seconds()))), nil
}

// fetchProfile writes the simulator's profile at /debug/pprof/<path> of the first node's
// kubelet server (the address and port its Node reports) to file in cfg.profileDir. The profiles
// are the process's: every node of a fleet shares it.
func fetchProfile(ctx context.Context, w *fleetWatch, cfg config, path, file string) error {
	first := fmt.Sprintf("%s-%0*d", cfg.prefix, len(strconv.Itoa(cfg.nodes-1)), 0)
	// The API server serves before the nodes register: the first may not be there yet.
	var n *v1.Node
	for n == nil {
		if obj, ok, _ := w.nodeInformer.GetStore().GetByKey(first); ok {
			n, _ = obj.(*v1.Node)
		}
		if n != nil && n.Status.DaemonEndpoints.KubeletEndpoint.Port != 0 {
			break
		}
		n = nil
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s: not seen with its kubelet server's port: %w", first, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
	host := ""
	for _, a := range n.Status.Addresses {
		if a.Type == v1.NodeInternalIP {
			host = a.Address
		}
	}
	if host == "" || n.Status.DaemonEndpoints.KubeletEndpoint.Port == 0 {
		return fmt.Errorf("node %s reports no kubelet server address", first)
	}
	url := "https://" + net.JoinHostPort(host, strconv.Itoa(int(n.Status.DaemonEndpoints.KubeletEndpoint.Port))) + "/debug/pprof/" + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// The simulator's kubelet servers have a certificate of its own authority; the profile is
	// the benchmark's own measurement, not a secret.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("get %s: %s: %s", url, resp.Status, b)
	}
	f, err := os.Create(filepath.Join(cfg.profileDir, file))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("read %s: %w", url, err)
	}
	return f.Close()
}

// checkGoroutinesEvery refuses a -profile-goroutines-every that fetches nothing useful: a
// negative period, or one without -profile-dir to write the profiles to.
func checkGoroutinesEvery(cfg config) error {
	switch {
	case cfg.goroutinesEvery < 0:
		return fmt.Errorf("-profile-goroutines-every %v: want a positive duration, or zero for none", cfg.goroutinesEvery)
	case cfg.goroutinesEvery > 0 && cfg.profileDir == "":
		return fmt.Errorf("-profile-goroutines-every %v: needs -profile-dir to write the profiles to", cfg.goroutinesEvery)
	}
	return nil
}

// fetchGoroutines fetches the simulator's goroutine profile, in its text form (debug=1: each
// distinct stack once, with how many goroutines share it), once for each tick of ticks until
// created is closed, into goroutine-<n>-<ms>ms.txt in cfg.profileDir: n counts the fetches from
// 1 and ms is the time from start, by now, so that fetches less than a second (or a millisecond)
// apart keep their own files. A tick that arrives once created is closed fetches nothing. A
// failed fetch is reported to out and the next one tried.
func fetchGoroutines(ctx context.Context, w *fleetWatch, cfg config, start time.Time, now func() time.Time, ticks <-chan time.Time, created <-chan struct{}, out io.Writer) {
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-created:
			return
		case <-ticks:
		}
		// Both may be ready at once, and select picks either: the creates' end wins.
		select {
		case <-created:
			return
		default:
		}
		file := fmt.Sprintf("goroutine-%03d-%dms.txt", n, now().Sub(start).Milliseconds())
		if err := fetchProfile(ctx, w, cfg, "goroutine?debug=1", file); err != nil {
			fmt.Fprintf(out, "goroutine profile: %v\n", err)
		}
	}
}

// fleetWatch follows the nodes and the default namespace's pods from before the first create: a
// node's Ready condition, and per pod of this run (named podName(i), i below the total, seen
// after the first create) when it was created and first seen Running and Ready. It
// counts incrementally, at each change the watches deliver, and notes the moment every node is
// Ready and every pod Running and Ready. It watches (one list, then the changes) instead of
// listing again and again: a list of 30,000 pods every 2 s cost the simulator's API server more
// than its kubelets' own writes.
type fleetWatch struct {
	nodes, total int
	factories    []informers.SharedInformerFactory
	nodeInformer cache.SharedIndexInformer
	stopCh       chan struct{}
	stopOnce     sync.Once
	// done is closed once every node is Ready and every pod Running and Ready.
	done chan struct{}
	// lists counts the node and the pod watch's fetches of everything; listed is their count
	// once both had listed first.
	lists  [2]listCounter
	listed int64

	mu    sync.Mutex
	now   func() time.Time
	begin time.Time // the first create; zero until start
	ready map[string]bool
	pods  map[string]*podTimes
	// counts of ready nodes, created, Running and Ready pods; runningAt and readyAt the moments
	// every node was Ready and every pod Running (Ready), zero until then.
	readyNodes, createdPods, runningPods, readyPods int
	runningAt, readyAt                              time.Time
}

// podTimes is when one pod was created (its create returned or the watch first saw it) and
// became Running and Ready as the watch saw it; zero until then, and while it is not. uid is the
// pod's, once known: a pod deleted and created again under its name is another pod.
type podTimes struct {
	uid                     types.UID
	created, running, ready time.Time
}

// watchFleet starts the watches and returns once they have listed. It refuses a namespace that
// has pods named as this run's already (podPrefix): a list cannot tell them from the ones this
// run creates, and their being Running would count as this run's.
func watchFleet(ctx context.Context, client kubernetes.Interface, nodes, total int) (*fleetWatch, error) {
	w := &fleetWatch{nodes: nodes, total: total, stopCh: make(chan struct{}), done: make(chan struct{}),
		now: time.Now, ready: map[string]bool{}, pods: map[string]*podTimes{}}
	nf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(w.lists[0].see))
	pf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"), informers.WithTweakListOptions(w.lists[1].see))
	w.factories = []informers.SharedInformerFactory{nf, pf}
	ni, pi := nf.Core().V1().Nodes().Informer(), pf.Core().V1().Pods().Informer()
	w.nodeInformer = ni
	// The informers keep only what is counted: 30,000 whole pods are the harness's memory, not
	// the simulator's, but need not be.
	if err := pi.SetTransform(slimPod); err != nil {
		return nil, err
	}
	if _, err := ni.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.node(obj, false) },
		UpdateFunc: func(_, obj any) { w.node(obj, false) },
		DeleteFunc: func(obj any) { w.node(obj, true) },
	}); err != nil {
		return nil, err
	}
	if _, err := pi.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.pod(obj, false) },
		UpdateFunc: func(_, obj any) { w.pod(obj, false) },
		DeleteFunc: func(obj any) { w.pod(obj, true) },
	}); err != nil {
		return nil, err
	}
	nf.Start(w.stopCh)
	pf.Start(w.stopCh)
	if !cache.WaitForCacheSync(ctx.Done(), ni.HasSynced, pi.HasSynced) {
		w.stop()
		return nil, fmt.Errorf("list nodes and pods: %w", context.Cause(ctx))
	}
	w.listed = w.lists[0].count() + w.lists[1].count()
	var old []string
	for _, k := range pi.GetStore().ListKeys() {
		if _, name, _ := strings.Cut(k, "/"); strings.HasPrefix(name, podPrefix) {
			old = append(old, k)
		}
	}
	if len(old) > 0 {
		w.stop()
		slices.Sort(old)
		return nil, fmt.Errorf("%d pods named %s* exist already in namespace default, the first %s: fleetload counts only the pods it creates, named %s<i> there; delete them first",
			len(old), podPrefix, old[0], podPrefix)
	}
	return w, nil
}

// relists is how many times the watches fetched everything again since they first listed.
func (w *fleetWatch) relists() int64 {
	return w.lists[0].count() + w.lists[1].count() - w.listed
}

// listCounter counts one informer's fetches of everything (a list, or a watch that begins with
// every object, as client-go's reflector asks when the server supports it) from the options of
// its requests. A plain list right after such a watch is the reflector's fallback for a server
// that refused it: the same fetch. Pages after a list's first are the same list.
type listCounter struct {
	mu             sync.Mutex
	n              int64
	afterWatchList bool
}

func (c *listCounter) see(o *metav1.ListOptions) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case o.SendInitialEvents != nil && *o.SendInitialEvents:
		c.n++
		c.afterWatchList = true
	case !o.AllowWatchBookmarks && o.Continue == "": // a list; the reflector's watches ask for bookmarks
		if !c.afterWatchList {
			c.n++
		}
		c.afterWatchList = false
	case o.AllowWatchBookmarks:
		c.afterWatchList = false
	}
}

func (c *listCounter) count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// slimPod keeps of a pod what fleetWatch reads: its name, phase and Ready condition.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion},
		Status: v1.PodStatus{Phase: p.Status.Phase}}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			slim.Status.Conditions = []v1.PodCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return slim, nil
}

// stop ends the watches; it may be called more than once.
func (w *fleetWatch) stop() {
	w.stopOnce.Do(func() {
		close(w.stopCh)
		for _, f := range w.factories {
			f.Shutdown()
		}
	})
}

// start notes the first create's time: nothing is counted before it.
func (w *fleetWatch) start(at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.begin = at
	w.check(at) // a fleet of no pods is complete once its nodes are Ready
}

// ours reports whether name is one of the pods this run creates, podName(i) for i below the total.
func (w *fleetWatch) ours(name string) bool {
	n, ok := strings.CutPrefix(name, podPrefix)
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i >= 0 && i < w.total && podName(i) == name
}

// created notes that the create of the pod named name, with uid, returned at.
func (w *fleetWatch) created(name string, uid types.UID, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.times1(name)
	if t.uid == "" {
		t.uid = uid
	} else if uid != "" && t.uid != uid {
		return // the watch has seen a later pod of the name already
	}
	w.createdAt(t, at)
	w.check(at)
}

// times1 returns the pod's times, adding them. The caller holds mu.
func (w *fleetWatch) times1(name string) *podTimes {
	p := w.pods[name]
	if p == nil {
		p = &podTimes{}
		w.pods[name] = p
	}
	return p
}

// createdAt notes a pod's creation at the earlier of its create's return and its first sight.
// The caller holds mu.
func (w *fleetWatch) createdAt(p *podTimes, at time.Time) {
	if p.created.IsZero() {
		p.created = at
		w.createdPods++
	} else if at.Before(p.created) {
		p.created = at
	}
}

// node counts a node's Ready condition as a watch delivered it.
func (w *fleetWatch) node(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	n, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			ready = c.Status == v1.ConditionTrue && !deleted
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if was := w.ready[n.Name]; was != ready {
		if ready {
			w.readyNodes++
		} else {
			w.readyNodes--
		}
	}
	if deleted {
		delete(w.ready, n.Name)
	} else {
		w.ready[n.Name] = ready
	}
	w.check(w.now())
}

// pod notes a pod's first sight and when it became Running and Ready. A pod that leaves Running
// or Ready again is counted out again, so that "every pod Running" holds at one moment, and its
// time is the one it becomes so again.
// A deleted pod is counted out and forgotten: one created again under its name (or seen with
// another UID) is timed from its own creation.
func (w *fleetWatch) pod(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok || p.Namespace != "default" || !w.ours(p.Name) {
		return
	}
	running := p.Status.Phase == v1.PodRunning && !deleted
	ready := false
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			ready = c.Status == v1.ConditionTrue && !deleted
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.begin.IsZero() {
		return
	}
	at := w.now()
	t := w.pods[p.Name]
	if t != nil && t.uid != "" && p.UID != "" && t.uid != p.UID {
		// Another pod of the name (a relist may deliver a recreation as an update): the
		// earlier one's times are not this one's.
		w.forget(p.Name, t)
		t = nil
	}
	if deleted {
		// A pod created again under the name is timed from its own creation.
		if t != nil {
			w.forget(p.Name, t)
		}
		return
	}
	if t == nil {
		t = w.times1(p.Name)
	}
	if t.uid == "" {
		t.uid = p.UID
	}
	w.createdAt(t, at)
	w.runningPods += flip(&t.running, running, at)
	w.readyPods += flip(&t.ready, ready, at)
	w.check(at)
}

// forget drops the pod named name, whose times are t, from the counts. The caller holds mu.
func (w *fleetWatch) forget(name string, t *podTimes) {
	w.runningPods += flip(&t.running, false, time.Time{})
	w.readyPods += flip(&t.ready, false, time.Time{})
	if !t.created.IsZero() {
		w.createdPods--
	}
	delete(w.pods, name)
}

// flip sets *since to at when on begins, to zero when it ends, and returns the change of the
// count of pods that are on.
func flip(since *time.Time, on bool, at time.Time) int {
	switch {
	case on && since.IsZero():
		*since = at
		return 1
	case !on && !since.IsZero():
		*since = time.Time{}
		return -1
	}
	return 0
}

// check notes the moments every node is Ready and every pod Running (Ready), and closes done
// once both have come. The caller holds mu.
func (w *fleetWatch) check(at time.Time) {
	if w.begin.IsZero() {
		return // nothing before the first create counts, nor is a moment before it
	}
	nodesReady := w.readyNodes == w.nodes
	if w.runningAt.IsZero() && nodesReady && w.runningPods == w.total {
		w.runningAt = at
	}
	if w.readyAt.IsZero() && nodesReady && w.readyPods == w.total {
		w.readyAt = at
	}
	if !w.runningAt.IsZero() && !w.readyAt.IsZero() {
		select {
		case <-w.done:
		default:
			close(w.done)
		}
	}
}

// counts is what fleetWatch has seen so far.
type counts struct{ created, readyNodes, running, readyPods int }

func (w *fleetWatch) snapshot() counts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return counts{w.createdPods, w.readyNodes, w.runningPods, w.readyPods}
}

// times returns the moments, since the first create, when every node was Ready and every pod
// Running (Ready), and the spread of the pods' times from their creation to Running (Ready).
func (w *fleetWatch) times() (running, ready time.Duration, toRunning, toReady spread) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var run, rdy []time.Duration
	for _, p := range w.pods {
		if p.created.IsZero() {
			continue
		}
		if !p.running.IsZero() {
			run = append(run, max(p.running.Sub(p.created), 0))
		}
		if !p.ready.IsZero() {
			rdy = append(rdy, max(p.ready.Sub(p.created), 0))
		}
	}
	since := func(t time.Time) time.Duration {
		if t.IsZero() {
			return 0
		}
		return t.Sub(w.begin)
	}
	return since(w.runningAt), since(w.readyAt), spreadOf(run), spreadOf(rdy)
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
