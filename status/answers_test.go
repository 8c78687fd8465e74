package status

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// answerPod is a Deployment's pod as the API server answers a status write: managed fields of
// three managers, a spec with a projected token volume, a running container's status.
func answerPod() *v1.Pod {
	at := metav1.NewTime(time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC))
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d4b9c-x2x9q", GenerateName: "web-7d4b9c-", Namespace: "default", UID: "5b1d3c4e-0000-4000-8000-000000000001",
			ResourceVersion: "4711", CreationTimestamp: at,
			Labels:      map[string]string{"app": "web", "pod-template-hash": "7d4b9c"},
			Annotations: map[string]string{"kubernetes.io/config.mirror": "abc"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4b9c",
				UID: "5b1d3c4e-0000-4000-8000-000000000002"}},
			Finalizers: []string{"example.com/keep"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
					FieldsType: "FieldsV1", FieldsV1: fields(`{"f:metadata":{"f:generateName":{}},"f:spec":{"f:containers":{}}}`)},
				{Manager: "kube-scheduler", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
					FieldsType: "FieldsV1", FieldsV1: fields(`{"f:status":{"f:conditions":{}}}`), Subresource: "status"},
				{Manager: "minikubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
					FieldsType: "FieldsV1", FieldsV1: fields(`{"f:status":{"f:phase":{}}}`), Subresource: "status"},
			},
		},
		Spec: v1.PodSpec{
			NodeName: "node-1",
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m")}}}},
			Volumes: []v1.Volume{{Name: "kube-api-access", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
				Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}}},
			Tolerations: []v1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute}},
		},
		Status: v1.PodStatus{
			Phase:      v1.PodRunning,
			Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: at}},
			HostIP:     "10.0.0.1", PodIP: "10.1.0.5", PodIPs: []v1.PodIP{{IP: "10.1.0.5"}}, StartTime: &at,
			ContainerStatuses: []v1.ContainerStatus{{Name: "pause", Ready: true, Image: "registry.k8s.io/pause:3.10",
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: at}}, ContainerID: "containerd://1"}},
			QOSClass: v1.PodQOSBurstable,
		},
	}
}

// encodeProtobuf is the API server's protobuf answer for obj.
func encodeProtobuf(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withoutSkipped is pod as leanPod answers it: no spec, no managed fields.
func withoutSkipped(pod *v1.Pod) *v1.Pod {
	pod = pod.DeepCopy()
	pod.Spec, pod.ManagedFields = v1.PodSpec{}, nil
	return pod
}

// recorded is one request as the server saw it.
type recorded struct {
	Method, URL string
	Header      http.Header
	Body        string
}

// recordingServer answers every request with status, contentType and body, and records them.
type recordingServer struct {
	mu          sync.Mutex
	requests    []recorded
	status      int
	contentType string
	body        []byte
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, recorded{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: string(b)})
	status, contentType, body := s.status, s.contentType, s.body
	s.mu.Unlock()
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (s *recordingServer) take() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// TestAnswerAdapterAsClientsetAdapter sends each call through both adapters to a server that
// records the requests and gives the same answer to both: the requests must be the same bytes
// (method, URL, every header, body), the errors the same, and the pods the same but for what
// AnswerAdapter leaves out of a protobuf Pod.
func TestAnswerAdapterAsClientsetAdapter(t *testing.T) {
	pod := answerPod()
	notFound := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound, Message: `pods "web-7d4b9c-x2x9q" not found`,
		Details: &metav1.StatusDetails{Name: "web-7d4b9c-x2x9q", Kind: "pods"}}
	conflict := notFound.DeepCopy()
	conflict.Reason, conflict.Code, conflict.Message = metav1.StatusReasonConflict, http.StatusConflict, "the object has been modified"
	jsonPod, err := runtime.Encode(scheme.Codecs.LegacyCodec(schema.GroupVersion{Version: "v1"}), pod)
	if err != nil {
		t.Fatal(err)
	}
	kubelet := func(rc *rest.Config) {
		rc.ContentType = runtime.ContentTypeProtobuf
		rc.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		rc.UserAgent, rc.BearerToken = "minikubelet/test", "secret"
	}
	tests := []struct {
		name        string
		config      func(*rest.Config) // nil is client-go's defaults
		status      int
		contentType string
		body        []byte
		lean        bool // AnswerAdapter's pod is the pod less spec and managed fields
		notFound    bool
	}{
		{name: "protobuf pod, the kubelet's client", config: kubelet, status: http.StatusOK,
			contentType: runtime.ContentTypeProtobuf, body: encodeProtobuf(t, pod), lean: true},
		{name: "protobuf pod, client-go's defaults", status: http.StatusOK,
			contentType: runtime.ContentTypeProtobuf, body: encodeProtobuf(t, pod), lean: true},
		{name: "protobuf pod, content type with a parameter", config: kubelet, status: http.StatusOK,
			contentType: runtime.ContentTypeProtobuf + "; charset=binary", body: encodeProtobuf(t, pod), lean: true},
		{name: "JSON pod", config: kubelet, status: http.StatusOK, contentType: runtime.ContentTypeJSON, body: jsonPod},
		{name: "protobuf not found", config: kubelet, status: http.StatusNotFound,
			contentType: runtime.ContentTypeProtobuf, body: encodeProtobuf(t, notFound), notFound: true},
		{name: "protobuf Status in an OK answer", config: kubelet, status: http.StatusOK,
			contentType: runtime.ContentTypeProtobuf, body: encodeProtobuf(t, conflict)},
		{name: "protobuf bad bytes", config: kubelet, status: http.StatusOK,
			contentType: runtime.ContentTypeProtobuf, body: append([]byte("k8s\x00"), 0x0a, 0xff)},
		{name: "empty answer", config: kubelet, status: http.StatusOK, contentType: runtime.ContentTypeProtobuf},
		{name: "text error", config: kubelet, status: http.StatusInternalServerError, contentType: "text/plain", body: []byte("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &recordingServer{status: tt.status, contentType: tt.contentType, body: tt.body}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			rc := &rest.Config{Host: ts.URL}
			if tt.config != nil {
				tt.config(rc)
			}
			client, err := kubernetes.NewForConfig(rc)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			calls := []struct {
				name string
				call func(PodStatusClient) (*v1.Pod, error)
			}{
				{"GetPod", func(c PodStatusClient) (*v1.Pod, error) { return c.GetPod(ctx, "default", "web-7d4b9c-x2x9q") }},
				{"PatchPodStatus", func(c PodStatusClient) (*v1.Pod, error) {
					return c.PatchPodStatus(ctx, "default", "web-7d4b9c-x2x9q", []byte(`{"metadata":{"uid":"u"},"status":{"phase":"Running"}}`))
				}},
				{"DeletePod", func(c PodStatusClient) (*v1.Pod, error) {
					return nil, c.DeletePod(ctx, "default", "web-7d4b9c-x2x9q", "u")
				}},
			}
			for _, c := range calls {
				wantPod, wantErr := c.call(ClientsetAdapter{Client: client})
				want := srv.take()
				gotPod, gotErr := c.call(AnswerAdapter{Client: client})
				got := srv.take()
				if len(want) != 1 {
					t.Fatalf("%s: ClientsetAdapter sent %d requests, want 1", c.name, len(want))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: requests differ (-ClientsetAdapter +AnswerAdapter):\n%s", c.name, diff)
				}
				if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
					t.Fatalf("%s: error %v, ClientsetAdapter's %v", c.name, gotErr, wantErr)
				}
				if apierrors.IsNotFound(gotErr) != tt.notFound {
					t.Errorf("%s: IsNotFound(%v) = %t, want %t", c.name, gotErr, !tt.notFound, tt.notFound)
				}
				if c.name == "DeletePod" || wantErr != nil {
					continue
				}
				if tt.lean {
					wantPod = withoutSkipped(wantPod)
				}
				if !reflect.DeepEqual(gotPod, wantPod) {
					t.Errorf("%s: pod differs (-want +got):\n%s", c.name, cmp.Diff(wantPod, gotPod))
				}
			}
		})
	}
}

// TestLeanPodAsClientGo decodes pods of several shapes both ways.
func TestLeanPodAsClientGo(t *testing.T) {
	deleting := answerPod()
	now := metav1.Now()
	grace := int64(0)
	deleting.DeletionTimestamp, deleting.DeletionGracePeriodSeconds = &now, &grace
	empty := &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	noMeta := answerPod()
	noMeta.ObjectMeta = metav1.ObjectMeta{}
	tests := map[string]*v1.Pod{"running": answerPod(), "deleting": deleting, "empty": empty, "no metadata": noMeta}
	for name, pod := range tests {
		t.Run(name, func(t *testing.T) {
			body := encodeProtobuf(t, pod)
			got, ok := leanPod(body)
			if !ok {
				t.Fatal("leanPod refused a pod")
			}
			want := decodeLikeClientGo(t, body)
			if want == nil {
				t.Fatal("client-go refused the pod")
			}
			if want = withoutSkipped(want); !reflect.DeepEqual(got, want) {
				t.Errorf("pod differs (-client-go +leanPod):\n%s", cmp.Diff(want, got))
			}
		})
	}
	for name, body := range map[string][]byte{
		"no prefix":       encodeProtobuf(t, answerPod())[4:],
		"a Status":        encodeProtobuf(t, &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}}),
		"another version": bytes.Replace(encodeProtobuf(t, answerPod()), []byte("\x0a\x02v1"), []byte("\x0a\x02v2"), 1),
		"a truncated pod": encodeProtobuf(t, answerPod())[:100],
		"JSON":            []byte(`{"kind":"Pod","apiVersion":"v1"}`),
	} {
		if _, ok := leanPod(body); ok {
			t.Errorf("%s: leanPod decoded it, want client-go to", name)
		}
	}
}

// clientGoDecoder is the clientset's protobuf decoder: its content config's negotiated
// serializer, without conversion, decoding into the typed object handed to it.
var clientGoDecoder = sync.OnceValue(func() runtime.Decoder {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		panic("no protobuf serializer")
	}
	return scheme.Codecs.WithoutConversion().DecoderToVersion(info.Serializer, v1.SchemeGroupVersion)
})

// decodeLikeClientGo decodes body as the clientset's protobuf decoder does into a new pod: nil
// when it fails or the answer is not a pod.
func decodeLikeClientGo(t testing.TB, body []byte) *v1.Pod {
	t.Helper()
	pod := &v1.Pod{}
	out, _, err := clientGoDecoder().Decode(body, nil, pod)
	if err != nil || out != pod {
		return nil
	}
	return pod
}

// FuzzLeanPod holds leanPod to client-go's decoding: whenever leanPod decodes an answer,
// client-go decodes it to a pod too, the same less the spec and managed fields, or fails only on
// bytes inside those skipped fields (the one difference docs/fidelity.md lists: leanPod does not
// parse what it skips). leanPod may refuse what client-go decodes; client-go then decodes it.
func FuzzLeanPod(f *testing.F) {
	f.Add(encodeProtobuf(f, answerPod()))
	f.Add(encodeProtobuf(f, &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}))
	f.Add(encodeProtobuf(f, &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}}))
	f.Add([]byte("k8s\x00"))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := leanPod(body)
		if !ok {
			return
		}
		pod := &v1.Pod{}
		out, _, err := clientGoDecoder().Decode(body, nil, pod)
		if err == nil && out != pod {
			t.Fatalf("client-go decoded a %T where leanPod decoded a pod", out)
		}
		if err != nil {
			stripped := stripSkipped(body)
			if stripped == nil {
				t.Fatal("leanPod decoded an answer whose fields do not walk")
			}
			if _, _, err2 := clientGoDecoder().Decode(stripped, nil, &v1.Pod{}); err2 != nil {
				t.Fatalf("client-go fails (%v) outside the skipped fields too (%v)", err, err2)
			}
			return
		}
		if want := withoutSkipped(pod); !reflect.DeepEqual(got, want) {
			t.Errorf("pod differs (-client-go +leanPod):\n%s", cmp.Diff(want, got))
		}
	})
}

// TestAnswerAdapterOverTheFakeClientset: client-go's fake clientset has no REST client; its
// typed calls, answered by its object tracker, are ClientsetAdapter's.
func TestAnswerAdapterOverTheFakeClientset(t *testing.T) {
	pod := answerPod()
	pod.TypeMeta = metav1.TypeMeta{}
	client := fake.NewClientset(pod)
	got, err := AnswerAdapter{Client: client}.GetPod(context.Background(), pod.Namespace, pod.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, pod) {
		t.Errorf("pod differs (-want +got):\n%s", cmp.Diff(pod, got))
	}
	if _, err := (AnswerAdapter{Client: client}).PatchPodStatus(context.Background(), pod.Namespace, "gone", []byte(`{}`)); !apierrors.IsNotFound(err) {
		t.Errorf("PatchPodStatus of a missing pod: %v, want not found", err)
	}
}

// BenchmarkPodAnswer decodes a status write's answer (answerPod, a Deployment's running pod with
// three managers' fields) as client-go does into a new pod, and as AnswerAdapter does.
func BenchmarkPodAnswer(b *testing.B) {
	body := encodeProtobuf(b, answerPod())
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if decodeLikeClientGo(b, body) == nil {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("lean", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := leanPod(body); !ok {
				b.Fatal("not decoded")
			}
		}
	})
}
