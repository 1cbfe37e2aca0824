// Command egressserver is the test host of bench/egress.sh: it serves a
// file with sendfile (net/http's ServeContent on an *os.File) at /blob
// and a short reply at /small, on the address given. It is a benchmark
// fixture, not part of airlock.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	blob := flag.String("blob", "", "file served at /blob")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(*blob)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		http.ServeContent(w, r, "blob", time.Time{}, f)
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	fmt.Println("listening on", *addr)
	log.Fatal(http.ListenAndServe(*addr, mux))
}
