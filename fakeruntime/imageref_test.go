package fakeruntime

import "testing"

func TestParseImageName(t *testing.T) {
	for _, tc := range []struct{ image, want string }{
		{image: "nginx"},
		{image: "nginx:1.27"},
		{image: "registry.k8s.io/etcd:3.6.5-0"},
		{image: "localhost:5000/team/app@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{image: "Nginx:1.27", want: `couldn't parse image name "Nginx:1.27": invalid reference format: repository name (library/Nginx) must be lowercase`},
		{image: "nginx:1.27!", want: `couldn't parse image name "nginx:1.27!": invalid reference format`},
		{image: "nginx::1", want: `couldn't parse image name "nginx::1": invalid reference format`},
		{image: "nginx@sha256:abc", want: `couldn't parse image name "nginx@sha256:abc": invalid reference format`},
		{image: "nginx@sha256:" + "0123456789abcdef0123456789abcdef", want: `couldn't parse image name "nginx@sha256:0123456789abcdef0123456789abcdef": invalid checksum digest length`},
	} {
		err := parseImageName(tc.image)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("parseImageName(%q) = %q, want %q", tc.image, got, tc.want)
		}
	}
}

// FuzzParseImageName feeds image references from pod specs, outside input, to the parser: it
// must not panic, and a reference it accepts must keep being accepted with a tag added.
func FuzzParseImageName(f *testing.F) {
	for _, s := range []string{"nginx", "Nginx:1", "a/b/c:d@sha256:" + "00000000000000000000000000000000000000000000000000000000000000ff", "[::1]:5000/x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		if parseImageName(image) == nil && len(image) < 200 && !containsAny(image, "@:") {
			if err := parseImageName(image + ":v1"); err != nil {
				t.Errorf("%q parses but %q does not: %v", image, image+":v1", err)
			}
		}
	})
}

func containsAny(s, chars string) bool {
	for _, c := range chars {
		for _, d := range s {
			if c == d {
				return true
			}
		}
	}
	return false
}
