package shell

import (
	"strings"
	"sync"
)

// npm's commands and aliases (npm 11, lib/utils/cmd-list.js). npm runs a
// command word that is one of them, or the unique prefix of one ("npm
// pub" is publish, "npm exe" exec), as that command: npmCommand reads a
// word as npm does, so a rule about "npm publish" holds for every
// spelling npm accepts.
var npmCommands = table[[]string]{build: func() []string {
	return strings.Fields(`access adduser approve-scripts audit bugs cache ci completion config
	dedupe deny-scripts deprecate diff dist-tag docs doctor edit exec explain explore find-dupes fund get
	help help-search init install install-ci-test install-scripts install-test link ll login logout ls org
	outdated owner pack ping pkg prefix profile prune publish query rebuild repo restart root run sbom
	search set shrinkwrap stage star stars start stop team test token trust undeprecate uninstall
	unpublish unstar update version view whoami`)
}}

var npmAliases = table[map[string]string]{build: func() map[string]string {
	return map[string]string{
		"author": "owner", "home": "docs", "issues": "bugs", "info": "view", "show": "view", "find": "search",
		"add": "install", "unlink": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall",
		"un": "uninstall", "rb": "rebuild", "list": "ls", "ln": "link", "create": "init", "i": "install",
		"it": "install-test", "cit": "install-ci-test", "u": "update", "up": "update", "c": "config",
		"s": "search", "se": "search", "tst": "test", "t": "test", "ddp": "dedupe", "v": "view",
		"run-script": "run", "clean-install": "ci", "clean-install-test": "install-ci-test", "x": "exec",
		"why": "explain", "la": "ll", "verison": "version", "ic": "ci", "innit": "init", "in": "install",
		"ins": "install", "inst": "install", "insta": "install", "instal": "install", "isnt": "install",
		"isnta": "install", "isntal": "install", "isntall": "install", "install-clean": "ci",
		"isntall-clean": "ci", "hlep": "help", "dist-tags": "dist-tag", "upgrade": "update",
		"udpate": "update", "rum": "run", "sit": "install-ci-test", "urn": "run", "ogr": "org",
		"add-user": "adduser",
	}
}}

// npmAbbrevs maps every unique prefix of a command or alias to it.
var npmAbbrevs = sync.OnceValue(func() map[string]string {
	words := append([]string(nil), npmCommands.get()...)
	for a := range npmAliases.get() {
		words = append(words, a)
	}
	count := map[string]int{}
	owner := map[string]string{}
	for _, w := range words {
		for i := 1; i <= len(w); i++ {
			count[w[:i]]++
			owner[w[:i]] = w
		}
	}
	out := map[string]string{}
	for p, n := range count {
		if n == 1 {
			out[p] = owner[p]
		}
	}
	for _, w := range words {
		out[w] = w // a whole word is itself, even when it begins another
	}
	return out
})

// npmCommand returns the command npm runs for word, or "" when npm knows
// none ("npm tset" fails).
func npmCommand(word string) string {
	if strings.ContainsAny(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		// npm reads camelCase as kebab-case (installTest is install-test).
		var b strings.Builder
		for _, r := range word {
			if r >= 'A' && r <= 'Z' {
				b.WriteByte('-')
				r += 'a' - 'A'
			}
			b.WriteRune(r)
		}
		word = b.String()
	}
	if a, ok := npmAliases.get()[word]; ok {
		return a
	}
	a := npmAbbrevs()[word]
	for i := 0; i < 4; i++ {
		if to, ok := npmAliases.get()[a]; ok {
			a = to
		}
	}
	return a
}
