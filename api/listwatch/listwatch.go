package listwatch

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Interface lists and watches the objects of one kind as the kind's typed client does (its List
// and Watch), L being its list type. The objects it hands over may be shared with others: a list
// item or a watch event's object is the receiver's own struct, everything beneath it read-only.
type Interface[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Funcs lists and watches the objects of one kind, L being its list type, by calling two
// functions, as a typed client's List and Watch would.
type Funcs[L runtime.Object] struct {
	ListFunc  func(ctx context.Context, opts metav1.ListOptions) (L, error)
	WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// List calls ListFunc.
func (f Funcs[L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	return f.ListFunc(ctx, opts)
}

// Watch calls WatchFunc.
func (f Funcs[L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchFunc(ctx, opts)
}

// InNamespace lists and watches over namespace, metav1.NamespaceAll for every namespace, with a
// list and a watch that take a namespace (fakeapiserver.Direct's ListPods and WatchPods,
// ListLeases and WatchLeases).
func InNamespace[L runtime.Object](namespace string,
	list func(ctx context.Context, namespace string, opts metav1.ListOptions) (L, error),
	watchIn func(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)) Funcs[L] {
	return Funcs[L]{
		ListFunc: func(ctx context.Context, opts metav1.ListOptions) (L, error) { return list(ctx, namespace, opts) },
		WatchFunc: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return watchIn(ctx, namespace, opts)
		},
	}
}
