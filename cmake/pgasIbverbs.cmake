# pgas::ibgda: the IBGDA transport with its rdma-core host side (libibverbs, libmlx5, <infiniband/mlx5dv.h>);
# defines nothing when rdma-core is absent. Include it after pgas::pgas exists; the top-level
# CMakeLists.txt and pgasConfig.cmake do (the one place pgas::ibgda is defined).
#
# pgas_find_rdma_core() defines, when everything is found, the imported targets
# pgas::rdma_core (headers + libibverbs + libmlx5) and sets PGAS_HAVE_RDMA_CORE
# in the caller's scope. The IBGDA headers compile without it (they check with
# __has_include); only the hardware backend of ibgda_domain needs the libraries.
function(pgas_find_rdma_core)
  if(TARGET pgas::rdma_core)
    set(PGAS_HAVE_RDMA_CORE TRUE PARENT_SCOPE)
    return()
  endif()
  find_path(PGAS_RDMA_CORE_INCLUDE_DIR infiniband/mlx5dv.h)
  find_library(PGAS_IBVERBS_LIBRARY ibverbs)
  find_library(PGAS_MLX5_LIBRARY mlx5)
  if(PGAS_RDMA_CORE_INCLUDE_DIR AND PGAS_IBVERBS_LIBRARY AND PGAS_MLX5_LIBRARY)
    add_library(pgas::rdma_core INTERFACE IMPORTED GLOBAL)
    set_target_properties(pgas::rdma_core PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${PGAS_RDMA_CORE_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES "${PGAS_IBVERBS_LIBRARY};${PGAS_MLX5_LIBRARY}")
    set(PGAS_HAVE_RDMA_CORE TRUE PARENT_SCOPE)
  else()
    message(STATUS "pgas: rdma-core (libibverbs-dev with mlx5dv.h) not found; IBGDA hardware backend and golden tests off")
    set(PGAS_HAVE_RDMA_CORE FALSE PARENT_SCOPE)
  endif()
endfunction()

pgas_find_rdma_core()
if(TARGET pgas::rdma_core AND NOT TARGET pgas_ibgda)
  add_library(pgas_ibgda INTERFACE)
  add_library(pgas::ibgda ALIAS pgas_ibgda)
  target_link_libraries(pgas_ibgda INTERFACE pgas::pgas pgas::rdma_core)
endif()
