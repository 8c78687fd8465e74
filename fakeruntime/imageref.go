package fakeruntime

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// The grammar of an image reference, as github.com/distribution/reference (which the kubelet's
// parsers.ParseImageName uses) defines it: [domain/]path[:tag][@digest].
var (
	domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domainPattern   = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?`
	pathComponent   = `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
	namePattern     = `(?:` + domainPattern + `/)?` + pathComponent + `(?:/` + pathComponent + `)*`
	tagPattern      = `[\w][\w.-]{0,127}`
	digestPattern   = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	referenceRegexp = regexp.MustCompile(`^(` + namePattern + `)(?::(` + tagPattern + `))?(?:@(` + digestPattern + `))?$`)
	identifierRegex = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// digestLengths are the hex lengths of the digest algorithms the reference parser knows.
var digestLengths = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// errInvalidReference is distribution/reference's ErrReferenceInvalidFormat.
var errInvalidReference = errors.New("invalid reference format")

// imageRef is the reference the fake runtime reports for the image an instance runs: the image
// name under its scheme, standing in for a registry digest. Made once an image, when
// checkImageName first accepts its name (a checkpoint's restore makes its own), and kept with
// each instance, so that building a status does not build it again.
func imageRef(image string) string {
	if image == "" {
		return ""
	}
	return kubecontainer.RuntimeScheme + image
}

// parseImageName is the kubelet's parsers.ParseImageName error path: it returns the error
// applyDefaultImageTag reports for an image reference that does not parse, as
// reference.ParseNormalizedNamed words it, or nil.
func parseImageName(image string) error {
	if err := parseNormalizedNamed(image); err != nil {
		return fmt.Errorf("couldn't parse image name %q: %w", image, err)
	}
	return nil
}

func parseNormalizedNamed(s string) error {
	if identifierRegex.MatchString(s) {
		return fmt.Errorf("invalid repository name (%s), cannot specify 64-byte hexadecimal strings", s)
	}
	domain, remainder := splitDockerDomain(s)
	remote := remainder
	if i := strings.IndexRune(remainder, ':'); i > -1 {
		remote = remainder[:i]
	}
	if strings.ToLower(remote) != remote {
		return fmt.Errorf("%w: repository name (%s) must be lowercase", errInvalidReference, remote)
	}
	return parseReference(domain + "/" + remainder)
}

// splitDockerDomain splits off the registry, docker.io when the first component is not one, and
// adds library/ to an official image's name.
func splitDockerDomain(name string) (domain, remainder string) {
	i := strings.IndexRune(name, '/')
	if i == -1 || (!strings.ContainsAny(name[:i], ".:") && name[:i] != "localhost" && strings.ToLower(name[:i]) == name[:i]) {
		domain, remainder = "docker.io", name
	} else {
		domain, remainder = name[:i], name[i+1:]
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.ContainsRune(remainder, '/') {
		remainder = "library/" + remainder
	}
	return domain, remainder
}

// parseReference is reference.Parse's checks: the grammar, the name's length and the digest.
func parseReference(s string) error {
	m := referenceRegexp.FindStringSubmatch(s)
	if m == nil {
		if s == "" {
			return errors.New("repository name must have at least one component")
		}
		if referenceRegexp.MatchString(strings.ToLower(s)) {
			return errors.New("repository name must be lowercase")
		}
		return errInvalidReference
	}
	if len(m[1]) > 255 {
		return errors.New("repository name must not be more than 255 characters")
	}
	if d := m[3]; d != "" {
		alg, hex, _ := strings.Cut(d, ":")
		n, ok := digestLengths[alg]
		switch {
		case !ok:
			return errors.New("unsupported digest algorithm")
		case len(hex) != n:
			return errors.New("invalid checksum digest length")
		case strings.ToLower(hex) != hex:
			return errors.New("invalid checksum digest format")
		}
	}
	return nil
}
