package controllers

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/minikubelet/minikubelet/api/podkey"
)

// nodeNameIndex is the name of the pod informer's index by spec.nodeName, as
// kube-controller-manager's node lifecycle and taint eviction controllers name theirs.
const nodeNameIndex = "spec.nodeName"

// podNodeName indexes a pod by the node it is bound to. Unlike the real controllers' index it
// also files the pods bound to no node, under "", which the scheduler core reads
// (ListUnboundPods) and would otherwise find by filtering every pod.
func podNodeName(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("index %s: %T is not a pod", nodeNameIndex, obj)
	}
	return []string{pod.Spec.NodeName}, nil
}

// informerPodIndex is PodIndex served from a pod informer's index by node name.
type informerPodIndex struct{ indexer cache.Indexer }

// newInformerPodIndex adds the index by node name to inf, which must not have started, and
// returns the PodIndex it serves.
func newInformerPodIndex(inf cache.SharedIndexInformer) (PodIndex, error) {
	if err := inf.AddIndexers(cache.Indexers{nodeNameIndex: podNodeName}); err != nil {
		return nil, fmt.Errorf("pod informer: index %s: %w", nodeNameIndex, err)
	}
	return informerPodIndex{indexer: inf.GetIndexer()}, nil
}

func (x informerPodIndex) PodsOnNode(node string) ([]*v1.Pod, error) {
	objs, err := x.indexer.ByIndex(nodeNameIndex, node)
	if err != nil {
		return nil, fmt.Errorf("pods of node %q: %w", node, err)
	}
	pods := make([]*v1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*v1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	slices.SortFunc(pods, func(a, b *v1.Pod) int { return strings.Compare(podkey.Of(a), podkey.Of(b)) })
	return pods, nil
}

func (x informerPodIndex) UnboundPods() ([]*v1.Pod, error) { return x.PodsOnNode("") }
