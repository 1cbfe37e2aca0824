//go:build !linux

package approval

import (
	"context"
	"errors"
	"io"
)

// ttyInput is a terminal in the prompt's mode. Only Linux has one: on
// other systems every In is read as a stream of lines.
type ttyInput struct{}

// startTTY returns nil: In is read as a stream.
func startTTY(io.Reader) (*ttyInput, error) { return nil, nil }

func (*ttyInput) discardTyped() error { return nil }

func (*ttyInput) readLine(context.Context) (string, error) {
	return "", errors.New("no terminal mode on this system")
}

func (*ttyInput) restore() error { return nil }
