package testnet

import (
	"fmt"
	"net"
)

// ServeBanner writes banner and a newline to every connection l accepts,
// then closes the connection, until l is closed. Only a client really
// connected to l can print the banner, so a test that finds it in a
// sandboxed program's output has proof the connection arrived.
func ServeBanner(l net.Listener, banner string) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, banner)
			c.Close()
		}
	}()
}
