# Engine variants vs fio on one mounted loop device (issue 17), from a throwaway build.
# Build: git apply bench/engine-variants/uring-variants.patch && cargo build --release --bin innotune,
# copy the binary aside, git checkout src/bench/engine/uring.rs. Lay out MNT/innotune-rr.0 (1 GiB) with
# `innotune bench --name rr --size 1024m --io_size 16k --directory MNT`, then, as root:
#   MNT=... INNOTUNE=copy python3 bench/engine-variants/compare.py 3 fio,default,nodefer-coop,min2 6
#   RW=randwrite QD=16 MNT=... INNOTUNE=copy python3 bench/engine-variants/compare.py 3 fio,default,nodefer-coop,min2 6
# Variants (INNOTUNE_URING_EXP): default = the shipped ring; nodefer-coop = cooperative task running
# instead of single issuer + deferred task running; min2 = wait for 2 completions. Prints medians.
import json, resource, subprocess, sys, os
mnt=os.environ["MNT"]; rt=sys.argv[1]; variants=sys.argv[2].split(","); rounds=int(sys.argv[3])
bs=os.environ.get("BS","16k"); qd=os.environ.get("QD","32"); rw=os.environ.get("RW","randread"); nj=os.environ.get("NJ","1")
def timed(cmd, env=None):
    b=resource.getrusage(resource.RUSAGE_CHILDREN)
    out=subprocess.run(cmd,check=True,capture_output=True,text=True,env=env).stdout
    a=resource.getrusage(resource.RUSAGE_CHILDREN)
    return json.loads(out),(a.ru_utime-b.ru_utime)+(a.ru_stime-b.ru_stime)
res={}
for r in range(rounds):
    for v in (variants if r%2==0 else variants[::-1]):
        if v=="fio":
            j,cpu=timed(["fio","--name=rr","--filename="+mnt+"/innotune-rr.0","--rw="+rw,"--bs="+bs,"--iodepth="+qd,"--numjobs="+nj,"--ioengine=io_uring","--direct=1","--size=1024m","--time_based","--runtime="+rt,"--norandommap","--group_reporting","--output-format=json"])
            d=j["jobs"][0]; d=d["read"] if d["read"]["total_ios"] else d["write"]; iops=d["iops"]; n=d["total_ios"]
        else:
            env=dict(os.environ); env["INNOTUNE_URING_EXP"]=v; env["INNOTUNE_STATE_DIR"]="/tmp/exp-state"
            j,cpu=timed([os.environ["INNOTUNE"],"--format","json","bench","--name","rr","--rw",rw,"--bs",bs,"--iodepth",qd,"--numjobs",nj,"--ioengine","io_uring","--direct=1","--size","1024m","--runtime",rt,"--directory",mnt],env)
            d=j["result"]["result"]["jobs"][0]; d=d.get("read") or d["write"]; iops=d["iops_per_s"]; n=d["total_ios"]
        res.setdefault(v,[]).append((iops,cpu*1e9/n))
        print(r,v,round(iops),round(cpu*1e9/n),flush=True)
import statistics
for v,l in res.items(): print("MED",v,round(statistics.median(x[0] for x in l)),round(statistics.median(x[1] for x in l)))
print(open("/proc/loadavg").read())
