package listwatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/minikubelet/minikubelet/api/listwatch"
)

// call is what one list or watch function was asked.
type call struct {
	Verb, Namespace string
	Opts            metav1.ListOptions
}

// TestInNamespace: the list and the watch are asked over the namespace given, with the caller's
// options, and hand back what the functions answered, errors included.
func TestInNamespace(t *testing.T) {
	errList, errWatch := errors.New("list refused"), errors.New("watch refused")
	tests := []struct {
		name      string
		namespace string
		opts      metav1.ListOptions
		listErr   error
		watchErr  error
	}{
		{name: "every namespace", namespace: metav1.NamespaceAll, opts: metav1.ListOptions{ResourceVersion: "7"}},
		{name: "one namespace", namespace: "kube-system", opts: metav1.ListOptions{FieldSelector: "spec.nodeName=n1"}},
		{name: "errors", namespace: "default", listErr: errList, watchErr: errWatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []call
			list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
			w := watch.NewEmptyWatch()
			lw := listwatch.InNamespace(tc.namespace,
				func(_ context.Context, ns string, opts metav1.ListOptions) (*v1.PodList, error) {
					calls = append(calls, call{"list", ns, opts})
					return list, tc.listErr
				},
				func(_ context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
					calls = append(calls, call{"watch", ns, opts})
					return w, tc.watchErr
				})
			gotList, err := lw.List(context.Background(), tc.opts)
			if gotList != list || !errors.Is(err, tc.listErr) || (tc.listErr == nil) != (err == nil) {
				t.Errorf("List() = %p, %v; want %p, %v", gotList, err, list, tc.listErr)
			}
			gotWatch, err := lw.Watch(context.Background(), tc.opts)
			if gotWatch != w || !errors.Is(err, tc.watchErr) || (tc.watchErr == nil) != (err == nil) {
				t.Errorf("Watch() = %v, %v; want %v, %v", gotWatch, err, w, tc.watchErr)
			}
			want := []call{{"list", tc.namespace, tc.opts}, {"watch", tc.namespace, tc.opts}}
			if diff := cmp.Diff(want, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFuncs: List and Watch call their own function, each once, with the caller's options.
func TestFuncs(t *testing.T) {
	var calls []call
	list := &v1.NodeList{}
	w := watch.NewEmptyWatch()
	lw := listwatch.Funcs[*v1.NodeList]{
		ListFunc: func(_ context.Context, opts metav1.ListOptions) (*v1.NodeList, error) {
			calls = append(calls, call{Verb: "list", Opts: opts})
			return list, nil
		},
		WatchFunc: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			calls = append(calls, call{Verb: "watch", Opts: opts})
			return w, nil
		},
	}
	opts := metav1.ListOptions{ResourceVersion: "3", AllowWatchBookmarks: true}
	if got, err := lw.List(context.Background(), opts); got != list || err != nil {
		t.Errorf("List() = %p, %v; want %p, nil", got, err, list)
	}
	if got, err := lw.Watch(context.Background(), opts); got != w || err != nil {
		t.Errorf("Watch() = %v, %v; want %v, nil", got, err, w)
	}
	if diff := cmp.Diff([]call{{Verb: "list", Opts: opts}, {Verb: "watch", Opts: opts}}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// Funcs and InNamespace's are what the list-watchers' users take.
var (
	_ listwatch.Interface[*v1.PodList] = listwatch.Funcs[*v1.PodList]{}
	_ listwatch.Interface[*v1.PodList] = listwatch.InNamespace[*v1.PodList]("", nil, nil)
)
