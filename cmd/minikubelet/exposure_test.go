package main

import (
	"net"
	"testing"
)

func TestExposed(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{addr: "127.0.0.1:8080", want: false},
		{addr: "[::1]:8080", want: false},
		{addr: "0.0.0.0:8080", want: true},
		{addr: "[::]:8080", want: true},
		{addr: "10.1.2.3:8080", want: true},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			a, err := net.ResolveTCPAddr("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			if got := exposed(a); got != tc.want {
				t.Errorf("exposed(%s) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}
