package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// defaultMetricResolution is how often the embedded API server's metrics are scraped: the
// --metric-resolution metrics-server's own deployment manifest gives it.
const defaultMetricResolution = 15 * time.Second

// Bounds of a scrape: how many nodes at once, how long one may take, and how much of an answer
// is read.
const (
	scrapeParallelism = 16
	scrapeTimeout     = 10 * time.Second
	scrapeMaxBytes    = 16 << 20
)

// resourceScraper is metrics-server for the embedded API server (its
// fakeapiserver.ResourceMetrics): every resolution it lists the nodes, scrapes each one's
// /metrics/resource at its InternalIP and kubelet port over HTTPS, as the node proxy reaches it,
// and keeps every node's and running container's two latest samples, from which the API server
// serves metrics.k8s.io as metrics-server computes it. A node or container that the latest
// scrape did not see is forgotten.
type resourceScraper struct {
	resolution time.Duration

	mu         sync.Mutex // guards nodes and containers
	nodes      map[string]fakeapiserver.NodeUsage
	containers map[containerKey]fakeapiserver.ContainerUsage
}

type containerKey struct{ namespace, pod, container string }

var _ fakeapiserver.ResourceMetrics = (*resourceScraper)(nil)

func newResourceScraper(resolution time.Duration) *resourceScraper {
	if resolution <= 0 {
		resolution = defaultMetricResolution
	}
	return &resourceScraper{resolution: resolution, nodes: map[string]fakeapiserver.NodeUsage{},
		containers: map[containerKey]fakeapiserver.ContainerUsage{}}
}

// ResourceUsage implements fakeapiserver.ResourceMetrics: the nodes and containers with two
// samples, in name order.
func (r *resourceScraper) ResourceUsage() fakeapiserver.ResourceUsage {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out fakeapiserver.ResourceUsage
	for _, n := range r.nodes {
		if !n.Previous.Timestamp.IsZero() {
			out.Nodes = append(out.Nodes, n)
		}
	}
	slices.SortFunc(out.Nodes, func(a, b fakeapiserver.NodeUsage) int { return cmp.Compare(a.Name, b.Name) })
	keys := make([]containerKey, 0, len(r.containers))
	for k, c := range r.containers {
		if !c.Previous.Timestamp.IsZero() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b containerKey) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.pod, b.pod), cmp.Compare(a.container, b.container))
	})
	for _, k := range keys {
		if n := len(out.Pods); n == 0 || out.Pods[n-1].Namespace != k.namespace || out.Pods[n-1].Name != k.pod {
			out.Pods = append(out.Pods, fakeapiserver.PodUsage{Namespace: k.namespace, Name: k.pod})
		}
		p := &out.Pods[len(out.Pods)-1]
		p.Containers = append(p.Containers, r.containers[k])
	}
	return out
}

// Run scrapes at once and then every resolution on clk until ctx is done. client lists the
// nodes; tlsConfig is how their kubelets are called.
func (r *resourceScraper) Run(ctx context.Context, client kubernetes.Interface, tlsConfig *tls.Config, clk clock.WithTicker) error {
	transport := &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 1, IdleConnTimeout: 2 * r.resolution,
		DialContext: (&net.Dialer{Timeout: scrapeTimeout}).DialContext}
	defer transport.CloseIdleConnections()
	httpClient := &http.Client{Transport: transport, Timeout: scrapeTimeout}
	t := clk.NewTicker(r.resolution)
	defer t.Stop()
	for {
		r.scrape(ctx, client, httpClient, clk)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// scrape scrapes every node once, some at a time, and keeps what it found.
func (r *resourceScraper) scrape(ctx context.Context, client kubernetes.Interface, hc *http.Client, clk clock.PassiveClock) {
	logger := klog.FromContext(ctx)
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		if ctx.Err() == nil {
			logger.V(2).Info("Failed to list the nodes to scrape", "err", err)
		}
		return
	}
	type result struct {
		node       string
		sample     fakeapiserver.UsageSample
		containers map[containerKey]fakeapiserver.UsageSample
	}
	results := make(chan result, len(nodes.Items))
	sem := make(chan struct{}, scrapeParallelism)
	var wg sync.WaitGroup
	for i := range nodes.Items {
		node := &nodes.Items[i]
		url, ok := resourceMetricsURL(node)
		if !ok {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ns, cs, err := fetchResourceMetrics(ctx, hc, url, clk.Now())
			if err != nil {
				if ctx.Err() == nil {
					logger.V(2).Info("Failed to scrape node", "node", node.Name, "url", url, "err", err)
				}
				return
			}
			results <- result{node: node.Name, sample: ns, containers: cs}
		})
	}
	wg.Wait()
	close(results)
	r.mu.Lock()
	defer r.mu.Unlock()
	nodesSeen := map[string]fakeapiserver.NodeUsage{}
	containersSeen := map[containerKey]fakeapiserver.ContainerUsage{}
	for res := range results {
		nodesSeen[res.node] = fakeapiserver.NodeUsage{Name: res.node, Previous: r.nodes[res.node].Latest, Latest: res.sample}
		for k, s := range res.containers {
			containersSeen[k] = fakeapiserver.ContainerUsage{Name: k.container, Previous: r.containers[k].Latest, Latest: s}
		}
	}
	r.nodes, r.containers = nodesSeen, containersSeen
}

// resourceMetricsURL is where the node's kubelet serves /metrics/resource: its InternalIP and
// advertised port, as the node proxy dials it.
func resourceMetricsURL(node *v1.Node) (string, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP && a.Address != "" {
			port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
			if port == 0 {
				port = 10250
			}
			return "https://" + net.JoinHostPort(a.Address, strconv.Itoa(int(port))) + "/metrics/resource", true
		}
	}
	return "", false
}

func fetchResourceMetrics(ctx context.Context, hc *http.Client, url string, now time.Time) (fakeapiserver.UsageSample, map[containerKey]fakeapiserver.UsageSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fakeapiserver.UsageSample{}, nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fakeapiserver.UsageSample{}, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fakeapiserver.UsageSample{}, nil, fmt.Errorf("request failed, status: %q", resp.Status)
	}
	return decodeResourceMetrics(io.LimitReader(resp.Body, scrapeMaxBytes), now)
}

// parseMetricFamilies is the text parser's TextToMetricFamilies, with its panics made errors: the
// parser (prometheus/common v0.66) dereferences a nil metric on a line that opens its labels
// before any name, such as "{}", and a node's answer is outside input.
func parseMetricFamilies(r io.Reader) (families map[string]*dto.MetricFamily, err error) {
	defer func() {
		if p := recover(); p != nil {
			families, err = nil, fmt.Errorf("text format parsing error: %v", p)
		}
	}()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(r)
}

// decodeResourceMetrics reads a kubelet's /metrics/resource as metrics-server decodes it: the
// node's CPU time and working set, and each container's CPU time, working set and start time,
// at the samples' timestamps (scrapedAt for a sample without one). A container missing one of
// its series is left out; the node's two are required.
func decodeResourceMetrics(r io.Reader, scrapedAt time.Time) (fakeapiserver.UsageSample, map[containerKey]fakeapiserver.UsageSample, error) {
	families, err := parseMetricFamilies(r)
	if err != nil {
		return fakeapiserver.UsageSample{}, nil, fmt.Errorf("decode resource metrics: %w", err)
	}
	at := func(m *dto.Metric) time.Time {
		if ms := m.GetTimestampMs(); ms > 0 {
			return time.UnixMilli(ms)
		}
		return scrapedAt
	}
	var node fakeapiserver.UsageSample
	var haveCPU, haveMem bool
	for _, m := range families["node_cpu_usage_seconds_total"].GetMetric() {
		node.CPUSeconds, node.Timestamp, haveCPU = value(m), at(m), true
	}
	for _, m := range families["node_memory_working_set_bytes"].GetMetric() {
		node.MemoryBytes, haveMem = toBytes(value(m)), true
	}
	if !haveCPU || !haveMem {
		return fakeapiserver.UsageSample{}, nil, errors.New("decode resource metrics: no node_cpu_usage_seconds_total or node_memory_working_set_bytes")
	}
	type partial struct {
		s                      fakeapiserver.UsageSample
		cpu, memory, startTime bool
	}
	cs := map[containerKey]*partial{}
	get := func(m *dto.Metric) *partial {
		k := containerKey{}
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "namespace":
				k.namespace = l.GetValue()
			case "pod":
				k.pod = l.GetValue()
			case "container":
				k.container = l.GetValue()
			}
		}
		if cs[k] == nil {
			cs[k] = &partial{}
		}
		return cs[k]
	}
	for _, m := range families["container_cpu_usage_seconds_total"].GetMetric() {
		p := get(m)
		p.s.CPUSeconds, p.s.Timestamp, p.cpu = value(m), at(m), true
	}
	for _, m := range families["container_memory_working_set_bytes"].GetMetric() {
		p := get(m)
		p.s.MemoryBytes, p.memory = toBytes(value(m)), true
	}
	for _, m := range families["container_start_time_seconds"].GetMetric() {
		p := get(m)
		sec := value(m)
		if !math.IsNaN(sec) && !math.IsInf(sec, 0) && math.Abs(sec) < 1e12 {
			p.s.StartTime, p.startTime = time.Unix(0, int64(sec*1e9)), true
		}
	}
	out := map[containerKey]fakeapiserver.UsageSample{}
	for k, p := range cs {
		if p.cpu && p.memory && p.startTime && k.namespace != "" && k.pod != "" && k.container != "" {
			out[k] = p.s
		}
	}
	return node, out, nil
}

// value is a sample's value, whatever its type.
func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// toBytes is a working set in bytes: nothing for a value that is not a count of bytes.
func toBytes(f float64) uint64 {
	if math.IsNaN(f) || f < 0 || f >= math.MaxUint64 {
		return 0
	}
	return uint64(f)
}
