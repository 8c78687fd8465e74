package fakeapiserver_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

// TestSelfSubjectAccessReview checks that every access review is allowed, with the reason that
// says why, and that a review without attributes is refused as kube-apiserver refuses it.
func TestSelfSubjectAccessReview(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	reviews := f.client.AuthorizationV1().SelfSubjectAccessReviews()
	got, err := reviews.Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "pods"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := authorizationv1.SubjectAccessReviewStatus{
		Allowed: true, Reason: "the minikubelet API server has no authorization: every authenticated request is allowed",
	}
	if diff := cmp.Diff(want, got.Status); diff != "" || got.Spec.ResourceAttributes.Resource != "pods" {
		t.Errorf("review status (-want +got):\n%s", diff)
	}
	_, err = reviews.Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
	wantErr := `SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`
	if !apierrors.IsInvalid(err) || err.Error() != wantErr {
		t.Errorf("review without attributes = %v, want %q", err, wantErr)
	}
	w := do(f.srv.Handler(), "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "", "")
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET selfsubjectaccessreviews = %d, want 405", w.Code)
	}

	rules, err := f.client.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRules := authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResourceRules: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
	if diff := cmp.Diff(wantRules, rules.Status); diff != "" {
		t.Errorf("rules review status (-want +got):\n%s", diff)
	}
}

// TestSelfSubjectReview checks who the server says a client is: the token's user, or the
// anonymous user when the server takes no token.
func TestSelfSubjectReview(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		want  authenticationv1.UserInfo
	}{
		{"token", "secret", authenticationv1.UserInfo{Username: "minikubelet", Groups: []string{"system:masters", "system:authenticated"}}},
		{"no token", "", authenticationv1.UserInfo{Username: "system:anonymous", Groups: []string{"system:unauthenticated"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, fakeapiserver.Options{BearerToken: tc.token})
			cfg := f.restConfig()
			cfg.BearerToken = tc.token
			client := kubernetes.NewForConfigOrDie(cfg)
			got, err := client.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Status.UserInfo); diff != "" {
				t.Errorf("user (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWebhookReviews: what a kubelet's webhook authentication and authorization ask. A
// TokenReview authenticates the server's own token as its one user and no other token; a
// SubjectAccessReview is allowed, as every request is, once it names a user or a group and one
// kind of attributes.
func TestWebhookReviews(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{BearerToken: "secret"})
	cfg := f.restConfig()
	cfg.BearerToken = "secret"
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	for _, tc := range []struct {
		token string
		want  authenticationv1.TokenReviewStatus
	}{
		{"secret", authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "minikubelet", Groups: []string{"system:masters", "system:authenticated"}}}},
		{"guess", authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}},
	} {
		got, err := client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tc.token}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got.Status); diff != "" {
			t.Errorf("TokenReview of %q (-want +got):\n%s", tc.token, diff)
		}
	}
	if _, err := client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) ||
		err.Error() != "token is required for TokenReview in authentication" {
		t.Errorf("TokenReview without a token = %v, want kube-apiserver's 400", err)
	}

	sars := client.AuthorizationV1().SubjectAccessReviews()
	got, err := sars.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:anonymous", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "metrics", Name: "n1"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Status.Allowed || got.Status.Reason == "" {
		t.Errorf("SubjectAccessReview status = %+v, want allowed with the reason", got.Status)
	}
	_, err = sars.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes"},
	}}, metav1.CreateOptions{})
	if want := `SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("SubjectAccessReview without a user = %v, want %q", err, want)
	}
}

// TestAPIServerMetrics checks /metrics: kube-apiserver's request counter and duration histogram,
// labelled by verb, resource, scope and code.
func TestAPIServerMetrics(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	cms := f.client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Get(missing) = %v", err)
	}
	if _, err := f.client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(f.ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1`,
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1`,
		`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="cluster",subresource="",verb="LIST",version="v1"} 1`,
		`apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="POST",version="v1"} 1`,
		`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="configmaps",scope="cluster",subresource="",verb="LIST",version="v1",le="0.005"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// fakeUsage is a ResourceMetrics that returns fixed samples.
type fakeUsage struct{ usage fakeapiserver.ResourceUsage }

func (f fakeUsage) ResourceUsage() fakeapiserver.ResourceUsage { return f.usage }

// TestResourceMetricsAPI checks metrics.k8s.io with a source: node and pod usage as rates over
// the two latest samples, only for objects that exist and have usable samples, with
// metrics-server's not-found errors; and without one, that the group is not served at all.
func TestResourceMetricsAPI(t *testing.T) {
	t0 := start.Add(-time.Minute)
	sample := func(at time.Time, cpu float64, mem uint64) fakeapiserver.UsageSample {
		return fakeapiserver.UsageSample{Timestamp: at, StartTime: t0, CPUSeconds: cpu, MemoryBytes: mem}
	}
	source := fakeUsage{fakeapiserver.ResourceUsage{
		Nodes: []fakeapiserver.NodeUsage{
			{Name: "node-1", Previous: sample(t0, 10, 1<<30), Latest: sample(t0.Add(10*time.Second), 15, 2<<30)},
			// A counter that went back (a restart the start time does not show) has no rate.
			{Name: "node-2", Previous: sample(t0, 10, 1<<30), Latest: sample(t0.Add(10*time.Second), 5, 1<<30)},
		},
		Pods: []fakeapiserver.PodUsage{{Namespace: "default", Name: "web", Containers: []fakeapiserver.ContainerUsage{
			{Name: "a", Previous: sample(t0, 1, 10<<20), Latest: sample(t0.Add(10*time.Second), 1.5, 20<<20)},
			{Name: "b", Previous: sample(t0, 0, 0), Latest: sample(t0.Add(5*time.Second), 0.25, 1<<20)},
		}}},
	}}
	f := newFixture(t, fakeapiserver.Options{ResourceMetrics: source})
	ctx := context.Background()
	for _, name := range []string{"node-1", "node-2", "node-3"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "a"}}}
		if _, err := f.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.createPod(t, newPod("default", "web", "node-1"))
	f.createPod(t, newPod("default", "idle", "node-1"))
	mc := metricsclient.NewForConfigOrDie(f.restConfig()).MetricsV1beta1()

	nodes, err := mc.NodeMetricses().List(ctx, metav1.ListOptions{LabelSelector: "pool=a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Fatalf("node metrics = %v, want node-1's only", nodes.Items)
	}
	got := nodes.Items[0]
	wantUsage := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	if got.Name != "node-1" || got.Window.Duration != 10*time.Second || !got.Timestamp.Time.Equal(t0.Add(10*time.Second)) ||
		got.Usage.Cpu().Cmp(wantUsage[corev1.ResourceCPU]) != 0 || got.Usage.Memory().Cmp(wantUsage[corev1.ResourceMemory]) != 0 {
		t.Errorf("node-1 metrics = %+v, want 500m cpu and 2Gi over 10s", got)
	}
	if _, err := mc.NodeMetricses().Get(ctx, "node-3", metav1.GetOptions{}); err == nil || err.Error() != `nodemetrics.metrics.k8s.io "node-3" not found` {
		t.Errorf("Get(node-3) = %v, want nodemetrics not found", err)
	}
	if _, err := mc.NodeMetricses().Get(ctx, "node-9", metav1.GetOptions{}); err == nil || err.Error() != `node "node-9" not found` {
		t.Errorf("Get(node-9) = %v, want node not found", err)
	}

	pods, err := mc.PodMetricses("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != "web" || len(pods.Items[0].Containers) != 2 {
		t.Fatalf("pod metrics = %+v, want web with two containers", pods.Items)
	}
	web := pods.Items[0]
	// The pod's timestamp and window are its earliest container's.
	if !web.Timestamp.Time.Equal(t0.Add(5*time.Second)) || web.Window.Duration != 5*time.Second {
		t.Errorf("web timestamp %v window %v, want the earliest container's", web.Timestamp, web.Window)
	}
	if c := web.Containers[1]; c.Name != "b" || c.Usage.Cpu().Cmp(resource.MustParse("50m")) != 0 {
		t.Errorf("container b = %+v, want 50m cpu", c)
	}
	if _, err := mc.PodMetricses("default").Get(ctx, "idle", metav1.GetOptions{}); err == nil || err.Error() != `podmetrics.metrics.k8s.io "default/idle" not found` {
		t.Errorf("Get(idle) = %v, want podmetrics not found", err)
	}

	req, _ := http.NewRequest("GET", f.ts.URL+"/apis/metrics.k8s.io/v1beta1/nodes", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"cells":["node-1","500m","2Gi","10s"]`) {
		t.Errorf("node metrics table = %s, want a row node-1 500m 2Gi 10s", body)
	}

	// Without a source, the group is not there: not in discovery, and its paths are not found.
	bare := newFixture(t, fakeapiserver.Options{})
	groups, err := bare.client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "metrics.k8s.io" {
			t.Errorf("discovery lists metrics.k8s.io without a source")
		}
	}
	_, err = metricsclient.NewForConfigOrDie(&rest.Config{Host: bare.ts.URL}).MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("node metrics without a source = %v, want NotFound", err)
	}
}
