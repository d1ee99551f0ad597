using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;

/// <summary>
/// The public API of an assembly, one line per type and member, sorted:
/// what users can compile against (DistributedLock keeps its own in
/// PublicAPI.Shipped.txt). scripts/test-dotnet.sh compares the packed
/// ZooLock.dll's with dotnet/PublicAPI.txt and fails on any drift.
///   PublicApi.exe ASSEMBLY
/// </summary>
static class PublicApi
{
    const BindingFlags Declared =
        BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    static int Main(string[] args)
    {
        if (args.Length != 1)
        {
            Console.Error.WriteLine("usage: PublicApi.exe ASSEMBLY");
            return 2;
        }
        var lines = new List<string>();
        foreach (var type in Assembly.LoadFrom(args[0]).GetTypes().Where(Visible))
        {
            string name = Name(type);
            lines.Add(Kind(type) + " " + name + Bases(type));
            if (type.IsEnum)
            {
                foreach (var field in type.GetFields(BindingFlags.Public | BindingFlags.Static))
                    lines.Add(name + "." + field.Name + " = " + Convert.ToInt64(field.GetRawConstantValue()));
                continue;
            }
            foreach (var member in type.GetMembers(Declared))
            {
                string line = Member(member);
                if (line != null) lines.Add(name + line);
            }
        }
        lines.Sort(StringComparer.Ordinal);
        foreach (var line in lines) Console.WriteLine(line);
        return 0;
    }

    static bool Visible(Type type)
    {
        if (type.IsNested) return (type.IsNestedPublic || type.IsNestedFamily) && Visible(type.DeclaringType);
        return type.IsPublic;
    }

    static bool Visible(MethodBase method)
    {
        return method != null && (method.IsPublic || method.IsFamily || method.IsFamilyOrAssembly);
    }

    static string Kind(Type type)
    {
        if (type.IsEnum) return "enum";
        if (type.IsInterface) return "interface";
        if (type.IsValueType) return "struct";
        if (typeof(Delegate).IsAssignableFrom(type)) return "delegate";
        if (type.IsAbstract && type.IsSealed) return "static class";
        return (type.IsAbstract ? "abstract " : type.IsSealed ? "sealed " : "") + "class";
    }

    static string Bases(Type type)
    {
        var bases = new List<string>();
        if (type.BaseType != null && type.BaseType != typeof(object) && !type.IsValueType && !type.IsEnum)
            bases.Add(Name(type.BaseType));
        bases.AddRange(type.GetInterfaces().Where(i => i.IsPublic || i.IsNestedPublic).Select(Name).OrderBy(n => n, StringComparer.Ordinal));
        return bases.Count == 0 ? "" : " : " + string.Join(", ", bases);
    }

    static string Member(MemberInfo member)
    {
        var ctor = member as ConstructorInfo;
        if (ctor != null) return Visible(ctor) ? ".ctor(" + Parameters(ctor) + ")" : null;
        var method = member as MethodInfo;
        if (method != null)
        {
            if (!Visible(method) || method.IsSpecialName) return null;
            return "." + method.Name + Generics(method) + "(" + Parameters(method) + ") -> " + Name(method.ReturnType)
                + (method.IsStatic ? " static" : "")
                + (method.IsAbstract ? " abstract" : method.IsVirtual && !method.IsFinal ? " virtual" : "");
        }
        var property = member as PropertyInfo;
        if (property != null)
        {
            var get = property.GetGetMethod(true);
            var set = property.GetSetMethod(true);
            if (!Visible(get) && !Visible(set)) return null;
            var index = property.GetIndexParameters();
            string indexed = index.Length == 0 ? "" : "[" + string.Join(", ", index.Select(p => Name(p.ParameterType))) + "]";
            return "." + property.Name + indexed + " : " + Name(property.PropertyType)
                + " {" + (Visible(get) ? " get;" : "") + (Visible(set) ? " set;" : "") + " }";
        }
        var ev = member as EventInfo;
        if (ev != null) return Visible(ev.GetAddMethod(true)) ? " event " + ev.Name + " : " + Name(ev.EventHandlerType) : null;
        var field = member as FieldInfo;
        if (field != null && (field.IsPublic || field.IsFamily))
        {
            return "." + field.Name + " : " + Name(field.FieldType)
                + (field.IsLiteral ? " = " + field.GetRawConstantValue() : field.IsInitOnly ? " readonly" : "")
                + (field.IsStatic && !field.IsLiteral ? " static" : "");
        }
        return null;
    }

    static string Generics(MethodInfo method)
    {
        return method.IsGenericMethodDefinition ? "<" + string.Join(", ", method.GetGenericArguments().Select(a => a.Name)) + ">" : "";
    }

    static string Parameters(MethodBase method)
    {
        return string.Join(", ", method.GetParameters().Select(p =>
            (p.IsOut ? "out " : p.ParameterType.IsByRef ? "ref " : p.GetCustomAttributes(typeof(ParamArrayAttribute), false).Length > 0 ? "params " : "")
            + Name(p.ParameterType) + " " + p.Name
            + (p.IsOptional ? " = " + (p.DefaultValue == null ? "null" : p.DefaultValue is string ? "\"" + p.DefaultValue + "\"" : p.DefaultValue.ToString()) : "")));
    }

    static string Name(Type type)
    {
        if (type.IsByRef) return Name(type.GetElementType());
        if (type.IsArray) return Name(type.GetElementType()) + "[]";
        if (type.IsGenericParameter) return type.Name;
        if (type.IsGenericType)
        {
            string bare = type.GetGenericTypeDefinition().FullName ?? type.Name;
            bare = bare.Substring(0, bare.IndexOf('`'));
            return bare + "<" + string.Join(", ", type.GetGenericArguments().Select(Name)) + ">";
        }
        return (type.FullName ?? type.Name).Replace('+', '.');
    }
}
