package provider

import "syscall"

// noFollow makes opening an output file refuse a symlink the run left.
const noFollow = syscall.O_NOFOLLOW
