#define GH_DESIGNS(X) \
  X(warpdrive, GH_WARPDRIVE) \
  X(cuckoo, GH_CUCKOO)
