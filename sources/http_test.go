package sources

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podvalidation"
	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podconfig"
	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
	"github.com/minikubelet/minikubelet/sources/staticpod"
)

// manifestServer serves whatever status and body the test last set, and records request headers.
type manifestServer struct {
	mu      sync.Mutex
	status  int
	body    string
	headers []http.Header
}

func (s *manifestServer) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *manifestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.headers = append(s.headers, r.Header.Clone())
	w.WriteHeader(s.status)
	w.Write([]byte(s.body))
}

func newHTTPSource(t *testing.T, status int, body string, header http.Header) (*HTTP, *manifestServer, *events) {
	t.Helper()
	ms := &manifestServer{status: status, body: body}
	srv := httptest.NewServer(ms)
	t.Cleanup(srv.Close)
	ev := &events{}
	h := newHTTP(t, HTTPOptions{URL: srv.URL, Header: header, NodeName: "different-value", Clock: vclock.New(vclock.Epoch), Tracer: ev})
	return h, ms, ev
}

func TestExtractFromHTTPBadness(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/_not_found_"
	srv.Close()
	ev := &events{}
	h := newHTTP(t, HTTPOptions{URL: url, NodeName: "other", Clock: vclock.New(vclock.Epoch), Tracer: ev})
	u, err := h.Poll(context.Background())
	if u != nil || err == nil || !strings.Contains(err.Error(), url) {
		t.Errorf("Poll() = %v, %v, want no update and an error naming %s", u, err, url)
	}
	if got := ev.take(); len(got) != 1 || got[0].Reason != "RequestFailed" || got[0].Func != "extractFromURL" {
		t.Errorf("trace = %+v, want one RequestFailed error", got)
	}
}

func TestExtractInvalidPods(t *testing.T) {
	// Each pod is named, so that the decoder gets past the name check to the branch the case names.
	named := metav1.ObjectMeta{Name: "a"}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want string // the error names the URL and contains this
	}{
		{"noVersion", &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}},
			"couldn't parse as single"},
		{"invalidVersion", &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1betta2", Kind: "Pod"}},
			"couldn't parse as single"},
		{"invalidVolumeName", &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: named,
			Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "_INVALID_"}}}},
			`spec.volumes[0].name: Invalid value: "_INVALID_"`},
		{"duplicateVolumeNames", &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: named,
			Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "repeated"}, {Name: "repeated"}}}},
			`spec.volumes[1].name: Duplicate value: "repeated"`},
		{"unspecifiedContainerName", &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: named,
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: ""}}}},
			"spec.containers[0].name: Required value"},
		{"invalidContainerName", &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: named,
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "_INVALID_"}}}},
			`spec.containers[0].name: Invalid value: "_INVALID_"`},
		{"noName", &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "i"}}}},
			"invalid pod: name is needed for the pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, _ := newHTTPSource(t, http.StatusOK, string(mustJSON(t, tc.pod)), nil)
			u, err := h.Poll(context.Background())
			if u != nil || err == nil {
				t.Fatalf("Poll() = %v, %v, want no update and an error", names(u), err)
			}
			if !strings.HasPrefix(err.Error(), h.url+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Poll() error = %q, want it to name %s and contain %q", err, h.url, tc.want)
			}
		})
	}
}

// httpWant is the pod TestExtractPodsFromHTTP expects for a served pod with one container.
func httpWant(name, ns, uid, container, image string, pull v1.PullPolicy) *v1.Pod {
	grace := int64(30)
	links := true
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-different-value", Namespace: ns, UID: types.UID(uid),
			Annotations: map[string]string{kubecontainer.ConfigHashAnnotationKey: uid}},
		Spec: v1.PodSpec{
			NodeName: "different-value", RestartPolicy: v1.RestartPolicyAlways, DNSPolicy: v1.DNSClusterFirst,
			SecurityContext: &v1.PodSecurityContext{}, TerminationGracePeriodSeconds: &grace,
			SchedulerName: v1.DefaultSchedulerName, EnableServiceLinks: &links,
			Containers: []v1.Container{{Name: container, Image: image, TerminationMessagePath: "/dev/termination-log",
				ImagePullPolicy: pull, TerminationMessagePolicy: v1.TerminationMessageReadFile}},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
}

func TestExtractPodsFromHTTP(t *testing.T) {
	served := func(name, ns, uid, container, image string, pull v1.PullPolicy) v1.Pod {
		return v1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), Namespace: ns},
			Spec: v1.PodSpec{NodeName: "different-value", SecurityContext: &v1.PodSecurityContext{}, SchedulerName: v1.DefaultSchedulerName,
				Containers: []v1.Container{{Name: container, Image: image, ImagePullPolicy: pull, TerminationMessagePolicy: v1.TerminationMessageReadFile}}},
			Status: v1.PodStatus{Phase: v1.PodPending},
		}
	}
	single := served("foo", "mynamespace", "111", "1", "foo", v1.PullAlways)
	list := v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []v1.Pod{
		served("foo", "", "111", "1", "foo", v1.PullAlways),
		served("bar", "", "222", "2", "bar:bartag", ""),
	}}
	for _, tc := range []struct {
		name string
		body []byte
		want []*v1.Pod
	}{
		{"singlePod", mustJSON(t, &single), []*v1.Pod{httpWant("foo", "mynamespace", "111", "1", "foo", v1.PullAlways)}},
		{"multiplePods", mustJSON(t, &list), []*v1.Pod{
			httpWant("foo", "default", "111", "1", "foo", v1.PullAlways),
			httpWant("bar", "default", "222", "2", "bar:bartag", v1.PullIfNotPresent),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, ev := newHTTPSource(t, http.StatusOK, string(tc.body), nil)
			u, err := h.Poll(context.Background())
			if err != nil {
				t.Fatalf("Poll() error = %v", err)
			}
			want := &podconfig.Update{Pods: tc.want, Op: podconfig.SET, Source: podconfig.HTTPSource}
			if diff := cmp.Diff(want, u); diff != "" {
				t.Errorf("Poll() mismatch (-want +got):\n%s", diff)
			}
			for _, p := range u.Pods {
				if errs := podvalidation.ValidatePodCreate(p, podvalidation.StaticPod); len(errs) > 0 {
					t.Errorf("received pod fails validation: %v", errs)
				}
			}
			got := ev.take()
			if len(got) != 1 || got[0].Event != "set" || got[0].Source != "http" || got[0].Func != "extractFromURL" ||
				!cmp.Equal(got[0].Pods, names(u)) {
				t.Errorf("trace = %+v, want one set event listing %v", got, names(u))
			}
		})
	}
}

func TestURLWithHeader(t *testing.T) {
	header := http.Header{}
	header.Set("Metadata-Flavor", "Google")
	pod := simplePod("foo", "foo")
	h, ms, _ := newHTTPSource(t, http.StatusOK, string(mustJSON(t, pod)), header)
	u, err := h.Poll(context.Background())
	if err != nil || u == nil || len(u.Pods) != 1 {
		t.Fatalf("Poll() = %v, %v, want one pod", names(u), err)
	}
	if len(ms.headers) != 1 || !cmp.Equal(ms.headers[0].Values("Metadata-Flavor"), []string{"Google"}) {
		t.Errorf("server saw headers %v, want Metadata-Flavor: Google once", ms.headers)
	}
}

// TestHTTPSequence checks the stored-body rules poll by poll: the empty-200 SET, the byte-identical
// short-circuit and quirks Q1 (the old body after an empty one is ignored) and Q2 (a bad body is
// cached).
func TestHTTPSequence(t *testing.T) {
	a := string(mustJSON(t, simplePod("a", "nginx")))
	b := string(mustJSON(t, simplePod("b", "nginx")))
	dup := string(mustJSON(t, &v1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		Items: []v1.Pod{*simplePod("x", "nginx"), *simplePod("x", "busybox")}}))
	h, ms, ev := newHTTPSource(t, http.StatusOK, "", nil)
	type step struct {
		name    string
		status  int
		body    string
		want    []string // nil: no update
		wantErr error    // checked with errors.Is; nil means no error
		reason  string
	}
	for _, s := range []step{
		{"first", 200, a, []string{"default/a-different-value"}, nil, ""},
		{"unchanged", 200, a, nil, nil, ""},
		{"serverError", 500, b, nil, &StatusError{}, "BadStatus"},
		{"noContent", 204, "", nil, &StatusError{}, "BadStatus"},
		{"empty", 200, "", []string{}, ErrEmptyBody, "EmptyBody"},
		{"q1SameBodyAgain", 200, a, nil, nil, ""},
		{"changed", 200, b, []string{"default/b-different-value"}, nil, ""},
		{"garbage", 200, "{not json", nil, ErrUnparsable, "UnparsableManifest"},
		{"q2GarbageAgain", 200, "{not json", nil, nil, ""},
		{"invalidPod", 200, string(mustJSON(t, simplePod("Bad", "nginx"))), nil, staticpod.ErrInvalidPod, "InvalidManifest"},
		{"duplicateNames", 200, dup, []string{"default/x-different-value", "default/x-different-value"}, nil, ""},
	} {
		ms.set(s.status, s.body)
		ev.take()
		u, err := h.Poll(context.Background())
		if s.want == nil && u != nil {
			t.Errorf("%s: Poll() sent %v, want no update", s.name, names(u))
		}
		if s.want != nil && !cmp.Equal(s.want, names(u)) {
			t.Errorf("%s: Poll() sent %v, want %v", s.name, names(u), s.want)
		}
		var statusErr *StatusError
		switch {
		case s.wantErr == nil && err != nil:
			t.Errorf("%s: Poll() error = %v, want nil", s.name, err)
		case s.wantErr == nil:
		case errors.As(s.wantErr, &statusErr):
			if !errors.As(err, &statusErr) || statusErr.StatusCode != s.status || !strings.HasSuffix(err.Error(), http.StatusText(s.status)) {
				t.Errorf("%s: Poll() error = %v, want a StatusError for %d", s.name, err, s.status)
			}
		case !errors.Is(err, s.wantErr):
			t.Errorf("%s: Poll() error = %v, want %v", s.name, err, s.wantErr)
		}
		if s.reason != "" {
			got := ev.take()
			last := got[len(got)-1]
			if last.Event != "error" || last.Reason != s.reason || last.Message != err.Error() {
				t.Errorf("%s: last trace event = %+v, want an error with reason %s", s.name, last, s.reason)
			}
		}
	}
}

func TestHTTPClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	h := newHTTP(t, HTTPOptions{URL: srv.URL, NodeName: "n", Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard,
		Client: &http.Client{Timeout: 50 * time.Millisecond}})
	u, err := h.Poll(context.Background())
	if u != nil || err == nil || !strings.Contains(err.Error(), "Client.Timeout") {
		t.Errorf("Poll() against a slow server = %v, %v, want no update and a client timeout", u, err)
	}
}

func TestHTTPNextWake(t *testing.T) {
	clk := vclock.New(vclock.Epoch)
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	h := newHTTP(t, HTTPOptions{URL: srv.URL, NodeName: "n", Clock: clk, Period: 20 * time.Second, Tracer: trace.Discard})
	if got, ok := h.NextWake(); !ok || !got.Equal(vclock.Epoch) {
		t.Errorf("NextWake() before the first poll = %v, %v, want the start", got, ok)
	}
	clk.Advance(3 * time.Second)
	h.Poll(context.Background())
	if got, _ := h.NextWake(); got.Sub(vclock.Epoch) != 23*time.Second {
		t.Errorf("NextWake() = start+%v, want start+23s (sliding, errors do not back off)", got.Sub(vclock.Epoch))
	}
}
