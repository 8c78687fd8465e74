package staticpod

import (
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/minikubelet/minikubelet/api/podvalidation"
	"github.com/minikubelet/minikubelet/kubecontainer"
)

var (
	// ErrInvalidPod marks a manifest that decoded as a Pod but is unusable: no name, or it fails
	// create-validation. Errors wrapping it read "invalid pod: ...", as the kubelet's do.
	ErrInvalidPod = errors.New("invalid pod")
	// ErrAPIReference marks a static pod that references API objects (the
	// PreventStaticPodAPIReferences check). Errors wrapping it read
	// "static pods may not reference <resource>".
	ErrAPIReference = errors.New("static pods may not reference")
)

// Options says where a manifest came from, which feeds the static-pod defaults.
type Options struct {
	// NodeName is the kubelet's node name: the name suffix, spec.nodeName and part of a file
	// pod's generated UID.
	NodeName string
	// Source is the manifest's file path or URL; it is part of the generated UID.
	Source string
	// IsFile selects the file-source defaults (UID from host and path, the NoExecute toleration)
	// over the http ones (UID from the URL only, no toleration).
	IsFile bool
}

// deserializer decodes JSON, YAML and protobuf into the core/v1 types, without defaulting or
// conversion: the kubelet's universal decoder restricted to the one group static pods use.
var deserializer = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		panic(fmt.Sprintf("manifest: registering core/v1: %v", err))
	}
	return serializer.NewCodecFactory(scheme).UniversalDeserializer()
}()

// DecodePod decodes one Pod manifest (YAML or JSON), applies scheme defaulting and the static-pod
// defaults, and validates it: the kubelet's tryDecodeSinglePod.
//
// parsed reports whether data was a v1 Pod at all. parsed with a nil error means pod is usable;
// parsed with an error means data was a Pod that is invalid; not parsed means data is something
// else (a caller may then try DecodePodList). data is never modified and pod is a new object.
func DecodePod(data []byte, opts Options) (pod *v1.Pod, parsed bool, err error) {
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, false, err
	}
	obj, _, err := deserializer.Decode(js, nil, nil)
	if err != nil {
		return nil, false, err
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, false, fmt.Errorf("invalid pod: decoded a %s", kindOf(obj))
	}
	if err := prepare(pod, opts); err != nil {
		return nil, true, err
	}
	return pod, true, nil
}

// DecodePodList decodes a v1 PodList (YAML or JSON) and prepares every item as DecodePod does:
// the kubelet's tryDecodePodList, which only the http source uses. The first bad item fails the
// whole list; an empty list is valid and yields no pods. Pods keep their list order.
func DecodePodList(data []byte, opts Options) (pods []*v1.Pod, parsed bool, err error) {
	obj, _, err := deserializer.Decode(data, nil, nil)
	if err != nil {
		return nil, false, err
	}
	list, ok := obj.(*v1.PodList)
	if !ok {
		return nil, false, fmt.Errorf("invalid pods list: decoded a %s", kindOf(obj))
	}
	pods = make([]*v1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pod := &list.Items[i]
		if err := prepare(pod, opts); err != nil {
			return nil, true, err
		}
		pods = append(pods, pod)
	}
	return pods, true, nil
}

func kindOf(obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", obj)
}

// prepare runs the steps after decoding, in the kubelet's order: name check, scheme defaulting,
// applyDefaults, create-validation, then the API-reference ban.
func prepare(pod *v1.Pod, opts Options) error {
	// The kubelet converts to its internal type and back, which leaves TypeMeta empty.
	pod.TypeMeta = metav1.TypeMeta{}
	setSchemeDefaults(pod)
	if pod.Name == "" {
		return fmt.Errorf("%w: name is needed for the pod", ErrInvalidPod)
	}
	if err := applyDefaults(pod, opts); err != nil {
		return err
	}
	if errs := podvalidation.ValidatePodCreate(pod, podvalidation.StaticPod); len(errs) > 0 {
		// %v of the list renders as the kubelet prints it: "[path: reason, ...]" in brackets.
		return fmt.Errorf("%w: %v", ErrInvalidPod, errs)
	}
	resource, err := apiReference(pod)
	if err != nil {
		return err
	}
	if resource != "" {
		return fmt.Errorf("%w %s", ErrAPIReference, resource)
	}
	// Last, as the pod is about to be shared: nothing after this step may write into it.
	cacheQuantityStrings(pod)
	return nil
}

// applyDefaults sets what the kubelet sets on every file and http pod (§10.3 of the reference):
// UID, name suffix, namespace, node name, config.hash, the file toleration and phase Pending.
func applyDefaults(pod *v1.Pod, opts Options) error {
	if pod.UID == "" {
		uid, err := staticPodUID(pod, opts)
		if err != nil {
			return err
		}
		pod.UID = uid
	}
	pod.Name = pod.Name + "-" + strings.ToLower(opts.NodeName)
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = opts.NodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[kubecontainer.ConfigHashAnnotationKey] = string(pod.UID)
	if opts.IsFile {
		addOrUpdateToleration(pod, v1.Toleration{Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute})
	}
	pod.Status.Phase = v1.PodPending
	return nil
}

// staticPodUID hashes the decoded, defaulted pod with FNV-1a 128 followed by the pod's location,
// as the kubelet does. The kubelet hashes the dump (dump.ForHash: spew's %#v with sorted keys) of
// its internal Go types; minikubelet hashes the same dump of the v1 pod. The values differ from a
// real kubelet's, but they change exactly when the kubelet's do: with the content, node or
// location, and with a field that goes from nil to empty (`labels: {}`, `env: []`), which the
// dump tells apart and JSON would not.
func staticPodUID(pod *v1.Pod, opts Options) (types.UID, error) {
	h := fnv.New128a()
	_, _ = h.Write([]byte(dump.ForHash(pod)))
	if opts.IsFile {
		fmt.Fprintf(h, "host:%s", opts.NodeName)
		fmt.Fprintf(h, "file:%s", opts.Source)
	} else {
		fmt.Fprintf(h, "url:%s", opts.Source)
	}
	return types.UID(hex.EncodeToString(h.Sum(nil))), nil
}

// addOrUpdateToleration adds t to the pod, or replaces in place every toleration with the same
// key, operator, value and effect (an identical one is thus left as it is).
func addOrUpdateToleration(pod *v1.Pod, t v1.Toleration) {
	matched := false
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].MatchToleration(&t) {
			// Every match is overwritten, as the kubelet's helper does for duplicates.
			pod.Spec.Tolerations[i] = t
			matched = true
		}
	}
	if !matched {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
	}
}
