// Command fleetload measures a simulated fleet: it creates pods bound round-robin to the nodes
// named <prefix>-<i>, and reports when every node is Ready and every pod Running, with the
// simulator's CPU time and RSS read from /proc. It is the end-to-end benchmark of
// docs/benchmarks.md, not part of the simulator.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the simulator's API server")
	nodes := flag.Int("nodes", 1000, "nodes the simulator runs")
	prefix := flag.String("node-name-prefix", "sim", "the simulator's --node-name-prefix")
	pods := flag.Int("pods-per-node", 30, "pods to bind to each node")
	pid := flag.Int("pid", 0, "the simulator's process id, for CPU and RSS")
	steady := flag.Duration("steady", 30*time.Second, "how long to measure the steady state after all pods run")
	workers := flag.Int("workers", 32, "parallel pod creations")
	flag.Parse()
	if err := run(*kubeconfig, *nodes, *prefix, *pods, *pid, *steady, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "fleetload:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, nodes int, prefix string, perNode, pid int, steady time.Duration, workers int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	start := time.Now()
	width := len(strconv.Itoa(nodes - 1))
	total := nodes * perNode
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				node := fmt.Sprintf("%s-%0*d", prefix, width, i%nodes)
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
	fmt.Printf("created %d pods in %v (%d failed)\n", total, time.Since(start).Round(time.Millisecond), failed.Load())
	for {
		nl, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range nl.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
					ready++
				}
			}
		}
		pl, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pl.Items {
			if p.Status.Phase == v1.PodRunning {
				running++
			}
		}
		fmt.Printf("%6.1fs nodes ready %d/%d, pods running %d/%d, rss %s\n", time.Since(start).Seconds(), ready, nodes, running, total, rss(pid))
		if ready == nodes && running == total {
			break
		}
		time.Sleep(2 * time.Second)
	}
	fmt.Printf("all Ready and Running %v after the first create\n", time.Since(start).Round(time.Millisecond))
	c1, _ := cpuSeconds(pid)
	time.Sleep(steady)
	c2, _ := cpuSeconds(pid)
	fmt.Printf("steady state: %.3f cores over %v, rss %s\n", (c2-c1)/steady.Seconds(), steady, rss(pid))
	return nil
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

func rss(pid int) string {
	if pid == 0 {
		return "?"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.Join(strings.Fields(l)[1:], " ")
		}
	}
	return "?"
}
