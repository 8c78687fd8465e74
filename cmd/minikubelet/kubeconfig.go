package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig that points kubectl at the server, with its token and the
// authority of its certificate, creating its directory.
//
// The file carries the token, so it is never written through what is at the path already: a file
// there keeps its mode and owner when written in place, and a symbolic link is followed, so that
// a local user who made the path first would read the token. The kubeconfig goes into a new file
// in the same directory, readable by its owner only, which then replaces the path in one rename
// (a link at the path is replaced, not followed). A path that another user owns is refused.
func writeKubeconfig(path string, sv serving) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if owner, other := ownedByOther(fi); other {
			return fmt.Errorf("write kubeconfig %s: the path belongs to user %d, not to this one: remove it or choose another --write-kubeconfig", path, owner)
		}
		if fi.IsDir() {
			return fmt.Errorf("write kubeconfig %s: the path is a directory", path)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	data, err := clientcmd.Write(*kubeconfigFor(sv))
	if err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	// Mode 0600: the kubeconfig holds the token.
	if err := replaceFile(path, data, 0o600); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}

// kubeconfigFor is the kubeconfig of one start of the server.
func kubeconfigFor(sv serving) *clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	cluster := &clientcmdapi.Cluster{Server: sv.url, CertificateAuthorityData: sv.caData}
	if len(sv.caData) == 0 {
		// Plain HTTP (--no-tls). client-go ignores TLS settings for an http:// server, but
		// stricter clients (the JavaScript client) refuse one unless the kubeconfig says
		// verification is off; without a certificate authority there is nothing to verify.
		cluster.InsecureSkipTLSVerify = true
	}
	kc.Clusters["minikubelet"] = cluster
	kc.AuthInfos["minikubelet"] = &clientcmdapi.AuthInfo{Token: sv.token}
	kc.Contexts["minikubelet"] = &clientcmdapi.Context{Cluster: "minikubelet", AuthInfo: "minikubelet", Namespace: "default"}
	kc.CurrentContext = "minikubelet"
	return kc
}
