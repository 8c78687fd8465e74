package fakeapiserver_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

func createPods(t *testing.T, f *fixture, n int) {
	t.Helper()
	for i := range n {
		f.createPod(t, newPod("default", fmt.Sprintf("pod-%02d", i), ""))
	}
}

func podNames(items []corev1.Pod) []string {
	var out []string
	for _, p := range items {
		out = append(out, p.Name)
	}
	return out
}

// TestKubectlChunkSize lists 10 pods with kubectl --chunk-size=2: five requests with limit=2, each
// but the first with the continue token of the one before, and every pod once.
func TestKubectlChunkSize(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	k := newKubectl(t, f)
	createPods(t, f, 10)
	cmd := k.command(context.Background(), "get", "pods", "--chunk-size=2", "-o", "name", "-v=6")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl get pods --chunk-size=2: %v\n%s", err, stderr.String())
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("pod/pod-%02d", i))
	}
	if diff := cmp.Diff(want, strings.Fields(string(out))); diff != "" {
		t.Errorf("kubectl get pods --chunk-size=2 (-want +got):\n%s", diff)
	}
	if n := strings.Count(stderr.String(), "limit=2"); n != 5 {
		t.Errorf("kubectl made %d requests with limit=2, want 5:\n%s", n, stderr.String())
	}
	if n := strings.Count(stderr.String(), "continue="); n != 4 {
		t.Errorf("kubectl made %d requests with a continue token, want 4", n)
	}
}

// TestPagerIsConsistent lists with client-go's pager, three to a page, while pods are added and
// deleted between the pages: the pages are one snapshot, as from etcd, and report how many items
// remain.
func TestPagerIsConsistent(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	createPods(t, f, 10)
	pods := f.client.CoreV1().Pods("default")
	var pages []metav1.ListMeta
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		list, err := pods.List(ctx, opts)
		if err == nil {
			pages = append(pages, list.ListMeta)
			if len(pages) == 1 {
				// Between the first page and the rest: one pod goes, one comes.
				if err := pods.Delete(ctx, "pod-07", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				f.createPod(t, newPod("default", "pod-05a", ""))
			}
		}
		return list, err
	})
	p.PageSize = 3
	obj, _, err := p.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("pager List() = %v", err)
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range items {
		got = append(got, o.(*corev1.Pod).Name)
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("pod-%02d", i))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paged list (-want +got):\n%s", diff)
	}
	var remaining []int64
	for _, m := range pages {
		if m.ResourceVersion != pages[0].ResourceVersion {
			t.Errorf("page resourceVersion %s, want the first page's %s", m.ResourceVersion, pages[0].ResourceVersion)
		}
		if m.RemainingItemCount != nil {
			remaining = append(remaining, *m.RemainingItemCount)
		}
	}
	if diff := cmp.Diff([]int64{7, 4, 1}, remaining); diff != "" {
		t.Errorf("remainingItemCount of the pages (-want +got):\n%s", diff)
	}
	// A new list sees the writes.
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 10 || list.Items[6].Name != "pod-05a" {
		t.Errorf("list after the writes = %v, %v", podNames(list.Items), err)
	}
}

// TestListOptionsErrors checks the answers to bad paging and resource version options against
// kube-apiserver's codes and messages.
func TestListOptionsErrors(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{HistorySize: 4})
	h := f.srv.Handler()
	createPods(t, f, 6) // the history keeps the last 4 writes of pods: 2 is compacted
	token := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, query string
		code        int
		message     string
	}{
		{"not base64", "limit=1&continue=%25%25", 400, "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"},
		{"no rv", "limit=1&continue=" + token(`{"v":"meta.k8s.io/v1","start":"a"}`), 400,
			"invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{"no start", "limit=1&continue=" + token(`{"v":"meta.k8s.io/v1","rv":5}`), 400,
			"invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{"other version", "limit=1&continue=" + token(`{"v":"v2","rv":5,"start":"a"}`), 400,
			"invalid continue token: continue key is not valid: server does not recognize this encoded version v2"},
		{"climbs out", "limit=1&continue=" + token(`{"v":"meta.k8s.io/v1","rv":5,"start":"../x"}`), 400,
			"invalid continue token: continue key is not valid: ../x"},
		{"rv with continue", "limit=1&resourceVersion=5&continue=" + token(`{"v":"meta.k8s.io/v1","rv":5,"start":"a"}`), 400,
			"specifying resource version is not allowed when using continue"},
		{"compacted continue", "limit=1&continue=" + token(`{"v":"meta.k8s.io/v1","rv":2,"start":"pod-01\u0000"}`), 410, "The provided continue parameter is too old"},
		{"compacted exact", "resourceVersion=2&resourceVersionMatch=Exact", 410, "The resourceVersion for the provided list is too old."},
		{"match without rv", "resourceVersionMatch=NotOlderThan", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`},
		{"exact 0", "resourceVersion=0&resourceVersionMatch=Exact", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"bad match", "resourceVersion=1&resourceVersionMatch=Newest", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""`},
		{"initial events on list", "sendInitialEvents=true", 422,
			`ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{"watch match without initial events", "watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`},
		{"continue from the future", "limit=1&continue=" + token(`{"v":"meta.k8s.io/v1","rv":1000,"start":"pod-01\u0000"}`), 504,
			fmt.Sprintf("Timeout: Too large resource version: 1000, current: %d", f.srv.ResourceVersion())},
		{"initial events maybe on list", "sendInitialEvents=maybe", 422,
			`ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
		{"watch maybe", "watch=maybe&resourceVersionMatch=NotOlderThan&resourceVersion=1", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`},
		{"watch false", "watch=False&resourceVersionMatch=Newest&resourceVersion=1", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""`},
		{"watch initial events without match", "watch=1&sendInitialEvents=true", 422,
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, "GET", "/api/v1/namespaces/default/pods?"+tc.query, "", "")
			st := decodeStatus(t, w)
			if w.Code != tc.code || !strings.HasPrefix(st.Message, tc.message) {
				t.Errorf("GET ?%s = %d %q, want %d %q", tc.query, w.Code, st.Message, tc.code, tc.message)
			}
			if tc.name == "compacted continue" && st.Continue == "" {
				t.Error("410 for a compacted continue carries no token to go on inconsistently")
			}
		})
	}
}

// TestListExactAndInconsistentContinue lists at an exact older version, and goes on with the
// token a 410 gives for a continue whose version was compacted.
func TestListExactAndInconsistentContinue(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{HistorySize: 3})
	ctx := context.Background()
	pods := f.client.CoreV1().Pods("default")
	createPods(t, f, 3)
	before := f.srv.ResourceVersion()
	if err := pods.Delete(ctx, "pod-00", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := pods.List(ctx, metav1.ListOptions{ResourceVersion: fmt.Sprint(before), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if err != nil || fmt.Sprint(podNames(old.Items)) != "[pod-00 pod-01 pod-02]" || old.ResourceVersion != fmt.Sprint(before) {
		t.Errorf("exact list at %d = %v at %s, %v; want the three pods", before, podNames(old.Items), old.ResourceVersion, err)
	}

	first, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page = %v, %v", first, err)
	}
	for i := range 4 { // push the first page's version out of the history
		f.createPod(t, newPod("default", fmt.Sprintf("z-%d", i), ""))
	}
	_, err = pods.List(ctx, metav1.ListOptions{Limit: 1, Continue: first.Continue})
	status, ok := err.(apierrors.APIStatus)
	if !apierrors.IsResourceExpired(err) || !ok || status.Status().Continue == "" {
		t.Fatalf("continue after compaction = %v, want 410 with a token", err)
	}
	rest, err := pods.List(ctx, metav1.ListOptions{Continue: status.Status().Continue})
	if err != nil || fmt.Sprint(podNames(rest.Items)) != "[pod-02 z-0 z-1 z-2 z-3]" {
		t.Errorf("inconsistent continue = %v, %v", podNames(rest.Items), err)
	}
}

// TestPeriodicBookmarks watches with allowWatchBookmarks and a timeout of 150 seconds, on the
// server's clock: after the initial events and their bookmark, one BOOKMARK a minute, and one
// two seconds before the timeout, each at the latest resource version. Only the first carries
// the initial-events-end annotation, as kube-apiserver's cacheWatcher annotates only the
// bookmark that ends a watch-list's initial events. The parameters are spelt
// as kube-apiserver's parameter codec reads them: any value but "0" and "false" is true.
func TestPeriodicBookmarks(t *testing.T) {
	for _, yes := range []string{"true", "maybe"} {
		t.Run(yes, func(t *testing.T) { testPeriodicBookmarks(t, yes) })
	}
}

func testPeriodicBookmarks(t *testing.T, yes string) {
	synctest.Test(t, func(t *testing.T) {
		srv := newServer(t, fakeapiserver.Options{Clock: clock.RealClock{}, Tracer: testOptions().Tracer})
		h := srv.Handler()
		l, _ := serve(t, srv)
		start := time.Now()
		c := l.dial(t, "GET /api/v1/namespaces/default/pods?watch="+yes+"&allowWatchBookmarks="+yes+"&timeoutSeconds=150 HTTP/1.1\r\nHost: fake\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		type seen struct {
			At      time.Duration
			Line    string
			Initial bool // carries the initial-events-end annotation
		}
		var got []seen
		record := func() {
			line := <-lines
			got = append(got, seen{time.Since(start).Round(time.Second), line[:min(len(line), 20)],
				strings.Contains(line, metav1.InitialEventsAnnotationKey)})
		}
		record() // the bookmark ending the (empty) initial events
		time.Sleep(30 * time.Second)
		body := `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`
		if w := do(h, "POST", "/api/v1/namespaces/default/pods", "application/json", body); w.Code != http.StatusCreated {
			t.Fatalf("create pod = %d %s", w.Code, w.Body.String())
		}
		for range 4 { // ADDED, a bookmark a minute, the pre-timeout one
			record()
		}
		for range lines {
			t.Error("watch sent more before its timeout")
		}
		want := []seen{
			{0, `{"type":"BOOKMARK","`, true},
			{30 * time.Second, `{"type":"ADDED","obj`, false},
			{60 * time.Second, `{"type":"BOOKMARK","`, false},
			{120 * time.Second, `{"type":"BOOKMARK","`, false},
			{148 * time.Second, `{"type":"BOOKMARK","`, false},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("watch lines (-want +got):\n%s", diff)
		}
	})
}
