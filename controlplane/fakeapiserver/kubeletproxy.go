package fakeapiserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	pathpkg "path"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletPodSubresources are the pod subresources the API server serves by calling the node's
// kubelet, with the kubelet path each one maps to.
var kubeletPodSubresources = map[string]string{
	"log": "containerLogs", "exec": "exec", "attach": "attach", "portforward": "portForward",
}

// logQueryParams are the PodLogOptions the API server passes on to the kubelet (LogLocation).
var logQueryParams = []string{"follow", "previous", "timestamps", "sinceSeconds", "sinceTime", "tailLines", "limitBytes", "stream"}

// serveKubeletProxy serves the subresources that reach a kubelet: pods/{name}/log, exec, attach
// and portforward, and nodes/{name}/proxy/{path}. segs follow the core group version. It reports
// whether the path was one of them.
func (s *Server) serveKubeletProxy(w http.ResponseWriter, r *http.Request, segs []string) bool {
	switch {
	case len(segs) == 5 && segs[0] == "namespaces" && segs[2] == "pods" && kubeletPodSubresources[segs[4]] != "":
		if err := s.proxyPod(w, r, segs[1], segs[3], segs[4]); err != nil {
			writeError(w, err)
		}
		return true
	case len(segs) >= 3 && segs[0] == "nodes" && segs[2] == "proxy":
		path := "/" + strings.Join(segs[3:], "/")
		if err := s.proxyNode(w, r, segs[1], path, r.URL.RawQuery); err != nil {
			writeError(w, err)
		}
		return true
	}
	return false
}

// proxyPod is LogLocation, ExecLocation, AttachLocation and PortForwardLocation: find the pod's
// node and container, then stream the kubelet's answer back.
func (s *Server) proxyPod(w http.ResponseWriter, r *http.Request, namespace, name, sub string) error {
	podRes := served["v1/pods"]
	var pod *v1.Pod
	err := s.store.locked(func() error {
		e, ok := s.store.get(podRes, namespace, name)
		if !ok {
			return apierrors.NewNotFound(podRes.groupResource(), name)
		}
		pod = e.obj.(*v1.Pod)
		return nil
	})
	if err != nil {
		return err
	}
	q := url.Values{}
	path := "/" + kubeletPodSubresources[sub] + "/" + namespace + "/" + name
	if sub != "portforward" {
		container, err := podContainer(pod, r.URL.Query().Get("container"))
		if err != nil {
			return err
		}
		path += "/" + container
	}
	switch sub {
	case "log":
		for _, k := range logQueryParams {
			if v := r.URL.Query().Get(k); v != "" {
				q.Set(k, v)
			}
		}
		if pod.Spec.NodeName == "" {
			// A pod not yet scheduled has no log: an empty answer.
			w.Header().Set("Content-Type", "text/plain")
			return nil
		}
	default:
		q = r.URL.Query()
		q.Del("container")
	}
	if pod.Spec.NodeName == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	return s.proxyNodeAs(w, r, pod.Spec.NodeName, path, q.Encode(), true)
}

// podContainer is the container a pod subresource names: the one given, or the only one.
func podContainer(pod *v1.Pod, name string) (string, error) {
	var names []string
	for _, cs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			names = append(names, c.Name)
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if name == "" {
		if len(pod.Spec.Containers) == 1 && len(pod.Spec.InitContainers) == 0 {
			return pod.Spec.Containers[0].Name, nil
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", pod.Name, names))
	}
	for _, n := range names {
		if n == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// kubeletTransport is how the server calls kubelets, as kube-apiserver's kubelet client: HTTPS,
// with the client certificate, verifying the kubelet's serving certificate only against ca, and
// HTTP/1.1, which the streaming subresources' upgrades need.
func kubeletTransport(cert *tls.Certificate, ca *x509.CertPool) *http.Transport {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: ca, InsecureSkipVerify: ca == nil}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Transport{
		TLSClientConfig:     cfg,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	}
}

// proxyNode streams the node's kubelet's answer to path?query back: the kubelet is found at the
// node's InternalIP (else its first address) and status.daemonEndpoints port, over HTTPS.
func (s *Server) proxyNode(w http.ResponseWriter, r *http.Request, nodeName, path, query string) error {
	return s.proxyNodeAs(w, r, nodeName, path, query, false)
}

// proxyNodeAs is proxyNode; with asStatus a kubelet failure that is not already a Status comes
// back as one carrying its text, as the pod subresources' LocationStreamer does.
func (s *Server) proxyNodeAs(w http.ResponseWriter, r *http.Request, nodeName, path, query string, asStatus bool) error {
	nodeRes := served["v1/nodes"]
	var node *v1.Node
	err := s.store.locked(func() error {
		e, ok := s.store.get(nodeRes, "", nodeName)
		if !ok {
			return apierrors.NewNotFound(nodeRes.groupResource(), nodeName)
		}
		node = e.obj.(*v1.Node)
		return nil
	})
	if err != nil {
		return err
	}
	host := kubeletHost(node)
	if host == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("node %s has no address", nodeName))
	}
	port := node.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		port = 10250
	}
	target := &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(int(port))), Path: path, RawQuery: query}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			if !asStatus {
				// nodes/proxy goes through kube-apiserver's wrapping transport, which tells the
				// kubelet the URI it was asked for; the pod subresources do not.
				pr.Out.Header.Set("X-Forwarded-Uri", forwardedURI(r.URL, target))
			}
		},
		Transport:     s.kubelets,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if !asStatus || resp.StatusCode < 400 || strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				return nil
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			return &kubeletError{code: resp.StatusCode, msg: strings.TrimSpace(string(body))}
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			var ke *kubeletError
			if errors.As(err, &ke) {
				writeError(w, apierrors.FromObject(&metav1.Status{Status: metav1.StatusFailure, Code: int32(ke.code), Reason: reasonForCode(ke.code), Message: ke.msg}))
				return
			}
			writeError(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach the kubelet of node %s: %v", nodeName, err)))
		},
	}
	proxy.ServeHTTP(w, r)
	return nil
}

// forwardedURI is the X-Forwarded-Uri of kube-apiserver's proxy transport (apimachinery's
// proxy.Transport): the incoming path with the target's path as its tail, as the client asked for
// it, such as /api/v1/nodes/n1/proxy/metrics.
func forwardedURI(in, target *url.URL) string {
	suffix := target.Path
	if strings.HasSuffix(in.Path, "/") && !strings.HasSuffix(suffix, "/") {
		suffix += "/"
	}
	uri := pathpkg.Join(strings.TrimSuffix(in.Path, suffix), target.EscapedPath())
	if strings.HasSuffix(target.Path, "/") {
		uri += "/"
	}
	return uri
}

// kubeletHost is the address the API server dials: InternalIP first, as simulated host names do
// not resolve (the kube-apiserver's default order puts Hostname first).
func kubeletHost(node *v1.Node) string {
	for _, typ := range []v1.NodeAddressType{v1.NodeInternalIP, v1.NodeHostName, v1.NodeInternalDNS, v1.NodeExternalIP, v1.NodeExternalDNS} {
		for _, a := range node.Status.Addresses {
			if a.Type == typ && a.Address != "" {
				return a.Address
			}
		}
	}
	return ""
}

// kubeletError is a kubelet's failure answer, turned into a Status for the client.
type kubeletError struct {
	code int
	msg  string
}

func (e *kubeletError) Error() string { return fmt.Sprintf("kubelet answered %d: %s", e.code, e.msg) }

// reasonForCode is the Status reason of an HTTP failure code.
func reasonForCode(code int) metav1.StatusReason {
	switch code {
	case http.StatusBadRequest:
		return metav1.StatusReasonBadRequest
	case http.StatusNotFound:
		return metav1.StatusReasonNotFound
	case http.StatusUnprocessableEntity:
		return metav1.StatusReasonInvalid
	case http.StatusServiceUnavailable:
		return metav1.StatusReasonServiceUnavailable
	}
	return metav1.StatusReasonInternalError
}
