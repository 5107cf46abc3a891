//! GPU runtime of twophase: cudarc context and stream, NVRTC program cache, kernel launches.
