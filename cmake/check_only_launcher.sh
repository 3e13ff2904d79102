#!/bin/sh
# Build-rule launcher of the targets compiled only to be checked (PGAS_CUDA_CHECK_ONLY, CMakeLists.txt): `compile
# CMD...` runs the compile, which -fsyntax-only leaves without an object, and writes an empty one (so that the build
# stays up to date); `link CMD...` links nothing and writes, in place of the program, a script that fails saying why.
mode=$1
shift
out=
previous=
for argument in "$@"; do
  [ "$previous" = -o ] && out=$argument
  previous=$argument
done
case $mode in
  compile)
    "$@" || exit
    [ -e "$out" ] || : > "$out"
    ;;
  link)
    printf '#!/bin/sh\necho "%s: compiled only to be checked (PGAS_CUDA_CHECK_ONLY), never linked: a test that runs it outside the GPU labels needs its target marked PGAS_CI_RUNS" >&2\nexit 1\n' "$out" > "$out"
    chmod +x "$out"
    ;;
  *)
    echo "check_only_launcher.sh: mode '$mode' is neither compile nor link" >&2
    exit 2
    ;;
esac
