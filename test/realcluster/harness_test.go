package realcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"plain", "1234 (etcd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0", 3 * time.Second, false},
		{"name with spaces and parentheses", "99 (a (b) c) R 1 99 99 0 -1 0 0 0 0 0 7 3 0 0", 100 * time.Millisecond, false},
		{"no name", "99 a R 1", 0, true},
		{"short", "99 (x) R 1 2 3", 0, true},
		{"not a number", "99 (x) R 1 99 99 0 -1 0 0 0 0 0 x 3 0 0", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatCPU = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestStatusKB(t *testing.T) {
	status := "Name:\tetcd\nVmPeak:\t  900 kB\nVmHWM:\t   12345 kB\nVmRSS:\t   2000 kB\nBad:\t12 MB\n"
	tests := []struct {
		field   string
		want    uint64
		wantErr bool
	}{
		{"VmHWM", 12345 * 1024, false},
		{"VmRSS", 2000 * 1024, false},
		{"Bad", 0, true},
		{"VmSwap", 0, true},
	}
	for _, tt := range tests {
		got, err := statusKB(status, tt.field)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("statusKB(%s) = %d, %v; want %d, error %v", tt.field, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestProcUsageOfItself(t *testing.T) {
	u, err := ProcUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS == 0 || u.RSS == 0 || u.PeakRSS < u.RSS {
		t.Errorf("usage of the test binary: %+v; want a peak RSS at least the RSS, both above 0", u)
	}
}

func FuzzParseStatCPU(f *testing.F) {
	f.Add("1234 (etcd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0")
	f.Add("1 ()) R")
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := parseStatCPU(s); err == nil && d < 0 {
			t.Errorf("parseStatCPU(%q) = %v, a negative time without an error", s, d)
		}
	})
}

// An audit log as kube-apiserver writes it: a watch at ResponseStarted and then
// ResponseComplete, a get, a refused patch, and a non-resource request.
const auditSample = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"minikubelet","groups":["system:nodes"]},"userAgent":"minikubelet","objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:00.000000Z","stageTimestamp":"2026-11-27T10:00:00.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/nodes/n1","verb":"get","user":{"username":"minikubelet","groups":["system:nodes"]},"userAgent":"minikubelet","objectRef":{"resource":"nodes","name":"n1","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:01.000000Z","stageTimestamp":"2026-11-27T10:00:01.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/pods/p/status","verb":"patch","user":{"username":"minikubelet","groups":["system:nodes"]},"userAgent":"minikubelet","objectRef":{"resource":"pods","namespace":"default","name":"p","apiVersion":"v1","subresource":"status"},"responseStatus":{"code":429},"requestReceivedTimestamp":"2026-11-27T10:00:02.000000Z","stageTimestamp":"2026-11-27T10:00:02.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","requestURI":"/api","verb":"get","user":{"username":"minikubelet","groups":["system:nodes"]},"userAgent":"minikubelet","responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:03.000000Z","stageTimestamp":"2026-11-27T10:00:03.001000Z"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"minikubelet","groups":["system:nodes"]},"userAgent":"minikubelet","objectRef":{"resource":"pods","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:00.000000Z","stageTimestamp":"2026-11-27T10:05:00.000000Z"}
`

func TestReadAuditLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(auditSample), 0o600); err != nil {
		t.Fatal(err)
	}
	reqs, err := ReadAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return time.Date(2026, 11, 27, 10, 0, s, 0, time.UTC) }
	want := []Request{
		{Received: at(0), User: "minikubelet", UserAgent: "minikubelet", Verb: "watch", Resource: "pods", Code: 200},
		{Received: at(1), User: "minikubelet", UserAgent: "minikubelet", Verb: "get", Resource: "nodes", Code: 200},
		{Received: at(2), User: "minikubelet", UserAgent: "minikubelet", Verb: "patch", Resource: "pods/status", Code: 429},
		{Received: at(3), User: "minikubelet", UserAgent: "minikubelet", Verb: "get", Resource: "/api", Code: 200},
	}
	if diff := cmp.Diff(want, reqs, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("ReadAuditLog (-want +got):\n%s", diff)
	}
	got := CountRequests(reqs, at(1), at(3))
	if diff := cmp.Diff(map[RequestKey]int{{"get", "nodes"}: 1, {"patch", "pods/status"}: 1}, got); diff != "" {
		t.Errorf("CountRequests in [1s, 3s) (-want +got):\n%s", diff)
	}
}

func TestReadAuditLogNamesTheBadLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.SplitAfter(auditSample, "\n")[0]+"{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadAuditLog(path)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("ReadAuditLog of a broken line: %v, want an error naming line 2", err)
	}
}

func TestRunPattern(t *testing.T) {
	tests := map[string]string{
		"TestX":          "^TestX$",
		"TestX/sub_test": "^TestX$/^sub_test$",
		"TestX/a.b(c)":   `^TestX$/^a\.b\(c\)$`,
	}
	for name, want := range tests {
		if got := runPattern(name); got != want {
			t.Errorf("runPattern(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestNodeName(t *testing.T) {
	tests := []struct {
		i, n int
		want string
	}{
		{0, 1, "p-0"}, {3, 10, "p-3"}, {3, 11, "p-03"}, {42, 500, "p-042"},
	}
	for _, tt := range tests {
		if got := nodeName("p", tt.i, tt.n); got != tt.want {
			t.Errorf("nodeName(p, %d, %d) = %q, want %q", tt.i, tt.n, got, tt.want)
		}
	}
}

func TestEnvName(t *testing.T) {
	tests := map[string]string{
		KubeAPIServer: "MINIKUBELET_E2E_KUBE_APISERVER",
		KwokStages:    "MINIKUBELET_E2E_KWOK_STAGES",
		Etcd:          "MINIKUBELET_E2E_ETCD",
	}
	for name, want := range tests {
		if got := EnvName(name); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestFindBinaries(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Etcd), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvBinDir, "")
	t.Setenv(EnvName(Etcd), "")
	if _, found, _ := FindBinaries(Etcd); found {
		t.Error("found etcd with no variable set")
	}
	t.Setenv(EnvBinDir, dir)
	b, found, err := FindBinaries(Etcd)
	if !found || err != nil || b[Etcd] != filepath.Join(dir, Etcd) {
		t.Errorf("FindBinaries(etcd) in %s = %v, %v, %v", dir, b, found, err)
	}
	if _, found, err := FindBinaries(Etcd, Kwok); !found || err == nil || !strings.Contains(err.Error(), "kwok") {
		t.Errorf("FindBinaries(etcd, kwok) with kwok missing = %v, %v; want an error naming kwok", found, err)
	}
	t.Setenv(EnvName(Kwok), filepath.Join(dir, Etcd))
	if b, _, err := FindBinaries(Kwok); err != nil || b[Kwok] != filepath.Join(dir, Etcd) {
		t.Errorf("FindBinaries(kwok) with %s set = %v, %v", EnvName(Kwok), b, err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTables builds the tables from two made-up runs: times, usage, requests by verb, per pod
// (heartbeat resources beyond their steady rate) and per node and minute.
func TestTables(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	run := func(tool string, extraNodeGets int) *Result {
		r := &Result{Tool: tool, Nodes: 2, Pods: 4, Start: at(0), DeployAt: at(10), SteadyFrom: at(20), End: at(80),
			Snapshot: Snapshot{NodesReadyAt: at(5), PodsRunningAt: at(19), PodsReadyAt: at(20)},
			Usage:    Usage{CPU: 1500 * time.Millisecond, PeakRSS: 42_000_000}}
		add := func(s float64, verb, res string, code int32) {
			r.Requests = append(r.Requests, Request{Received: at(s), Verb: verb, Resource: res, Code: code})
		}
		for i := range 4 { // per pod: one status patch, one event
			add(12+float64(i), "patch", "pods/status", 200)
			add(12+float64(i), "create", "events", 201)
		}
		for i := range extraNodeGets {
			add(11+float64(i)/10, "get", "nodes", 200)
		}
		// a lease update per node every 10 s, throughout
		for s := 10.0; s < 80; s += 10 {
			add(s, "update", "leases", 200)
			add(s+1, "update", "leases", 200)
		}
		add(30, "get", "configmaps", 403)
		return r
	}
	results := []*Result{run("a", 0), run("b", 4)}

	sum := SummaryTable(results)
	for _, want := range []string{
		"| a | 2 × 2 | 5.0 s | 9.0 s | 10.0 s | 1.5 s | 42 MB | 23 |",
		"| b | 2 × 2 | 5.0 s | 9.0 s | 10.0 s | 1.5 s | 42 MB | 27 |",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("SummaryTable has no row starting %q:\n%s", want, sum)
		}
	}
	if !strings.Contains(sum, " 0 | 403: 1 | 0 | 0 | 0.0 → 0.0 |\n") {
		t.Errorf("SummaryTable: want 0 other, one 403, no watch dropped, 0 nodes lost:\n%s", sum)
	}

	wantPerPod := "| resource | verb | a | b |\n|---|---|---|---|\n" +
		"| events | create | 1.00 | 1.00 |\n" +
		"| nodes | get | | 1.00 |\n" +
		"| pods/status | patch | 1.00 | 1.00 |\n"
	if diff := cmp.Diff(wantPerPod, PerPodTable(results)); diff != "" {
		t.Errorf("PerPodTable (-want +got):\n%s", diff)
	}
	// In [20 s, 80 s): 12 lease updates and one configmap get over 2 nodes and one minute.
	wantSteady := "| resource | verb | a | b |\n|---|---|---|---|\n" +
		"| configmaps | get | 0.50 | 0.50 |\n" +
		"| leases | update | 6.00 | 6.00 |\n"
	if diff := cmp.Diff(wantSteady, SteadyTable(results)); diff != "" {
		t.Errorf("SteadyTable (-want +got):\n%s", diff)
	}
}

// TestMinikubeletFleetName: a fleet is "minikubelet" in the tables unless it has a label, so
// that two fleets run with different flags are two rows and two columns.
func TestMinikubeletFleetName(t *testing.T) {
	for _, tc := range []struct {
		fleet MinikubeletFleet
		want  string
	}{{MinikubeletFleet{}, "minikubelet"}, {MinikubeletFleet{Label: InstantRuntimeLabel}, "minikubelet, instant runtime"}} {
		if got := tc.fleet.Name(); got != tc.want {
			t.Errorf("MinikubeletFleet{Label: %q}.Name() = %q, want %q", tc.fleet.Label, got, tc.want)
		}
	}
}
