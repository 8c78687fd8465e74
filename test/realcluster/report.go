package realcluster

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// verbs are the summary table's request columns, in kube-apiserver's order; anything else
// counts as "other".
var verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// heartbeatResources are the resources a node writes on its own clock, whatever its pods do:
// the per-pod table counts only their requests beyond the steady-state rate.
var heartbeatResources = map[string]bool{"nodes": true, "nodes/status": true, "leases": true}

// SummaryTable is one row per result: the times, the simulator's CPU and peak RSS, its requests
// by verb, the requests that failed by status code (404 of a lease or node not there yet, 409
// conflicts, 403 forbidden, 429 throttled by priority and fairness, ...), the watches
// kube-apiserver dropped because their client fell behind, the nodes lost on the way, and the
// machine's load average over a minute at the start and at the end.
func SummaryTable(results []*Result) string {
	var b strings.Builder
	b.WriteString("| tool | nodes × pods | nodes Ready | pods Running | pods Ready | CPU | peak RSS | requests |")
	for _, v := range verbs {
		b.WriteString(" " + v + " |")
	}
	b.WriteString(" other | failed | watches dropped | nodes lost | load |\n|---|---|---|---|---|---|---|---|")
	b.WriteString(strings.Repeat("---|", len(verbs)+5) + "\n")
	for _, r := range results {
		byVerb := map[string]int{}
		failed := map[int32]int{}
		for _, q := range r.Requests {
			byVerb[q.Verb]++
			if q.Code >= 400 {
				failed[q.Code]++
			}
		}
		fmt.Fprintf(&b, "| %s | %d × %d | %s | %s | %s | %s | %s | %s |", r.Tool, r.Nodes, r.Pods/max(r.Nodes, 1),
			seconds(r.NodesReady()), seconds(r.PodsRunning()), seconds(r.PodsReady()),
			seconds(r.Usage.CPU), megabytes(r.Usage.PeakRSS), thousands(len(r.Requests)))
		other := len(r.Requests)
		for _, v := range verbs {
			fmt.Fprintf(&b, " %s |", thousands(byVerb[v]))
			other -= byVerb[v]
		}
		lost := "0"
		if n := len(r.Snapshot.Lost); n > 0 {
			lost = fmt.Sprintf("%d (%s)", n, strings.Join(r.Snapshot.Lost[:min(n, 3)], "; "))
		}
		fmt.Fprintf(&b, " %s | %s | %d | %s | %.1f → %.1f |\n", thousands(other), codes(failed), r.DroppedWatches, lost, r.LoadBefore[0], r.LoadAt[0])
	}
	return b.String()
}

// PerPodTable is the simulators' requests per pod, by resource and verb, from the Deployment's
// creation to every pod Running and Ready. The heartbeat's resources (nodes, nodes/status,
// leases) count only beyond their steady-state rate (SteadyTable's), so that what a pod costs
// a node (a GET of the node at admission, say) shows and the heartbeat does not.
func PerPodTable(results []*Result) string {
	rows := map[RequestKey]bool{}
	perPod := make([]map[RequestKey]float64, len(results))
	for i, r := range results {
		perPod[i] = map[RequestKey]float64{}
		window := r.SteadyFrom.Sub(r.DeployAt)
		steady := CountRequests(r.Requests, r.SteadyFrom, r.End)
		steadyLen := r.End.Sub(r.SteadyFrom)
		for k, n := range CountRequests(r.Requests, r.DeployAt, r.SteadyFrom) {
			v := float64(n)
			if heartbeatResources[k.Resource] && steadyLen > 0 {
				v -= float64(steady[k]) * window.Seconds() / steadyLen.Seconds()
			}
			if v <= 0 {
				continue
			}
			perPod[i][k] = v / float64(max(r.Pods, 1))
			rows[k] = true
		}
	}
	return keyTable(results, rows, perPod, "%.2f")
}

// SteadyTable is the simulators' requests per node and minute once every pod is Running and
// Ready: the heartbeat (node status, lease) and whatever else goes on.
func SteadyTable(results []*Result) string {
	rows := map[RequestKey]bool{}
	rates := make([]map[RequestKey]float64, len(results))
	for i, r := range results {
		rates[i] = map[RequestKey]float64{}
		minutes := r.End.Sub(r.SteadyFrom).Minutes()
		if minutes <= 0 {
			continue
		}
		for k, n := range CountRequests(r.Requests, r.SteadyFrom, r.End) {
			rates[i][k] = float64(n) / float64(max(r.Nodes, 1)) / minutes
			rows[k] = true
		}
	}
	return keyTable(results, rows, rates, "%.2f")
}

func keyTable(results []*Result, rows map[RequestKey]bool, values []map[RequestKey]float64, format string) string {
	keys := make([]RequestKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Resource != keys[j].Resource {
			return keys[i].Resource < keys[j].Resource
		}
		return verbIndex(keys[i].Verb) < verbIndex(keys[j].Verb)
	})
	var b strings.Builder
	b.WriteString("| resource | verb |")
	for _, r := range results {
		b.WriteString(" " + r.Tool + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(results)) + "\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | %s |", k.Resource, k.Verb)
		for i := range results {
			if v, ok := values[i][k]; ok {
				fmt.Fprintf(&b, " "+format+" |", v)
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Report is the three tables with a line on the machine and the date, in Markdown.
func Report(results []*Result, ncpu int) string {
	var b strings.Builder
	if len(results) > 0 {
		first, last := results[0], results[len(results)-1]
		fmt.Fprintf(&b, "Run on %s, %d CPUs, load average (1, 5, 15 minutes) %s at the start and %s at the end.\n\n",
			first.Start.Format("2006-01-02"), ncpu, loads(first.LoadBefore), loads(last.LoadAt))
	}
	b.WriteString(SummaryTable(results))
	b.WriteString("\nRequests per pod, from the Deployment to every pod Running and Ready (heartbeat resources beyond their steady rate):\n\n")
	b.WriteString(PerPodTable(results))
	b.WriteString("\nRequests per node and minute in the steady state:\n\n")
	b.WriteString(SteadyTable(results))
	return b.String()
}

// codes is "404: 3, 409: 1", by code; "0" when there is none.
func codes(n map[int32]int) string {
	if len(n) == 0 {
		return "0"
	}
	cs := make([]int32, 0, len(n))
	for c := range n {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%d: %s", c, thousands(n[c]))
	}
	return strings.Join(parts, ", ")
}

func verbIndex(v string) int {
	for i, w := range verbs {
		if v == w {
			return i
		}
	}
	return len(verbs)
}

func seconds(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func megabytes(b uint64) string { return fmt.Sprintf("%d MB", (b+500_000)/1_000_000) }

func loads(l [3]float64) string { return fmt.Sprintf("%.1f/%.1f/%.1f", l[0], l[1], l[2]) }

// thousands writes n with comma separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
