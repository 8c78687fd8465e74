package ctrltest

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/controlplane/controllers"
)

// CountingClient is a controller's client for a test that checks what the controller reads: it
// counts the lists of nodes and of pods, names the nodes and the nodes' pods read, and fails the
// reads or the updates of one node while told to. With Feed set it tells the feed of every
// node it writes, as the node informer would once the write's watch event came.
type CountingClient struct {
	controllers.Client
	Feed *Feed
	// Lists counts ListNodes; Gets names GetNode's nodes, in order.
	Lists int
	Gets  []string
	// PodLists counts ListPods; PodNodes names ListPodsOnNode's nodes, in order.
	PodLists int
	PodNodes []string
	// FailGet and FailUpdate name the node whose reads, and whose updates, fail; "" for none.
	FailGet, FailUpdate string
}

// Reset forgets the reads counted so far: a test counts them pass by pass.
func (c *CountingClient) Reset() { c.Lists, c.Gets, c.PodLists, c.PodNodes = 0, nil, 0, nil }

func (c *CountingClient) ListNodes(ctx context.Context) ([]*v1.Node, error) {
	c.Lists++
	return c.Client.ListNodes(ctx)
}

func (c *CountingClient) GetNode(ctx context.Context, name string) (*v1.Node, error) {
	c.Gets = append(c.Gets, name)
	if c.FailGet != "" && name == c.FailGet {
		return nil, errors.New("cache unavailable")
	}
	return c.Client.GetNode(ctx, name)
}

func (c *CountingClient) ListPods(ctx context.Context) ([]*v1.Pod, error) {
	c.PodLists++
	return c.Client.ListPods(ctx)
}

func (c *CountingClient) ListPodsOnNode(ctx context.Context, node string) ([]*v1.Pod, error) {
	c.PodNodes = append(c.PodNodes, node)
	return c.Client.ListPodsOnNode(ctx, node)
}

func (c *CountingClient) UpdateNode(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	if c.FailUpdate != "" && node.Name == c.FailUpdate {
		return nil, errors.New("update refused")
	}
	c.wrote(node.Name)
	return c.Client.UpdateNode(ctx, node)
}

func (c *CountingClient) UpdateNodeStatus(ctx context.Context, node *v1.Node) (*v1.Node, error) {
	c.wrote(node.Name)
	return c.Client.UpdateNodeStatus(ctx, node)
}

func (c *CountingClient) wrote(name string) {
	if c.Feed != nil {
		c.Feed.Add(name)
	}
}
