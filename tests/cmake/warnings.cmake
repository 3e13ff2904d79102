# Included by the consumer projects: they build with -Wall -Wextra -Werror (host compiler, and nvcc's own
# front end through --Werror all-warnings), so a warning that a pgas header gives its users fails the test.
function(pgas_consumer_warnings_as_errors target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endfunction()
